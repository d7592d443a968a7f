# minhash values survive pg_dump and pg_restore (custom format), and COPY
# BINARY between databases, bit for bit.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE source');
$node->safe_psql('source', q{
	CREATE EXTENSION ndd;
	CREATE TABLE docs (id int PRIMARY KEY, body text, sketch minhash);
	INSERT INTO docs
	SELECT g, string_agg('w' || ((g * 31 + i * 17) % 500), ' '), NULL
	FROM generate_series(1, 200) g, generate_series(1, g) i GROUP BY g;
	INSERT INTO docs VALUES (201, '', NULL);
	UPDATE docs SET sketch = minhash_sketch(body);
	UPDATE docs SET sketch = minhash_sketch(body, num_perm => 64, unit => 'char', seed => 3)
	WHERE id % 10 = 0;
});
my $fingerprint = q{SELECT md5(string_agg(id || ':' || sketch::text, ',' ORDER BY id)) FROM docs};
my $before = $node->safe_psql('source', $fingerprint);

my $dump = $node->basedir . '/docs.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('source') ],
	'pg_dump of a table with minhash values');
$node->safe_psql('postgres', 'CREATE DATABASE target');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('target'), $dump ],
	'pg_restore into a new database');
is($node->safe_psql('target', $fingerprint), $before, 'restored sketches are identical');
# COPY BINARY out of one database and into another
my $bin = $node->basedir . '/docs.bin';
$node->safe_psql('source', "COPY docs TO '$bin' WITH (FORMAT binary)");
$node->safe_psql('target', 'TRUNCATE docs');
$node->safe_psql('target', "COPY docs FROM '$bin' WITH (FORMAT binary)");
is($node->safe_psql('target', $fingerprint), $before, 'COPY BINARY round trip is identical');

$node->stop;
done_testing();
