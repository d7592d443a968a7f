# simhash values and indexes survive pg_dump and pg_restore: the values bit
# for bit, the GIN and GiST indexes with their opclass options, and lookups
# through them give the same rows as before.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('simhash_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE source');
$node->safe_psql('source', q{
	CREATE EXTENSION ndd;
	CREATE TABLE pages (id int PRIMARY KEY, fp simhash UNIQUE);
	INSERT INTO pages SELECT g, simhash_from_bigint(hashint8extended(g, 3)) FROM generate_series(1, 5000) g;
	-- near-duplicates of row 1, one to four bits away
	INSERT INTO pages SELECT 10000 + d, simhash_from_bigint(fp::bigint # ((1::bigint << d) - 1))
	FROM pages, generate_series(1, 4) d WHERE id = 1;
	CREATE INDEX pages_gin ON pages USING gin (fp simhash_ops (max_distance = 5, keys = blocks));
	CREATE INDEX pages_gist ON pages USING gist (fp simhash_knn_ops);
});
my $values = q{SELECT md5(string_agg(id || ':' || fp::text, ',' ORDER BY id)) FROM pages};
my $indexes = q{SELECT string_agg(pg_get_indexdef(indexrelid), E'\n' ORDER BY indexrelid::regclass::text)
				FROM pg_index WHERE indrelid = 'pages'::regclass};
my $lookup = q{SET enable_seqscan = off; SET ndd.hamming_threshold = 4;
			   SELECT string_agg(id::text, ',' ORDER BY id) FROM pages
			   WHERE fp % (SELECT fp FROM pages WHERE id = 1)};
my $nearest = q{SET enable_seqscan = off;
				SELECT string_agg(d::text, ',') FROM (SELECT fp <-> (SELECT fp FROM pages WHERE id = 1) AS d
				FROM pages ORDER BY fp <-> (SELECT fp FROM pages WHERE id = 1) LIMIT 6) s};
my %before = map { $_->[0] => $node->safe_psql('source', $_->[1]) }
  ([ values => $values ], [ indexes => $indexes ], [ lookup => $lookup ], [ nearest => $nearest ]);
like($before{indexes}, qr/simhash_ops \(max_distance='5', keys=blocks\)/, 'the GIN index keeps its options');
is($before{lookup}, '1,10001,10002,10003,10004', 'the lookup finds the planted neighbours');
like($before{nearest}, qr/^0,1,2,3,4,\d+$/, 'the nearest rows come first, by distance');

my $dump = $node->basedir . '/pages.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('source') ],
	'pg_dump of a table with simhash values and indexes');
$node->safe_psql('postgres', 'CREATE DATABASE target');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('target'), $dump ],
	'pg_restore into a new database');
for my $what (qw(values indexes lookup nearest))
{
	my $query = { values => $values, indexes => $indexes, lookup => $lookup, nearest => $nearest }->{$what};
	is($node->safe_psql('target', $query), $before{$what}, "after restore, the $what are the same");
}

$node->stop;
done_testing();
