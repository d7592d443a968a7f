# similar() is IMMUTABLE, so postgres_fdw ships it to the remote server (with
# the extension listed in the server's "extensions" option), where the remote
# minhash_ops index serves it; % reads a setting and stays local.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('fdw');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE shard');
$node->safe_psql('shard', q{
	CREATE EXTENSION ndd;
	CREATE TABLE docs (id int PRIMARY KEY, sketch minhash);
	INSERT INTO docs
	SELECT g, minhash_sketch(string_agg('w' || ((g / 3) * 1000 + i + (g % 3) * (i = 60)::int * 7), ' '))
	FROM generate_series(1, 3000) g, generate_series(1, 60) i GROUP BY g;
	CREATE INDEX ON docs USING gin (sketch minhash_ops);
	ANALYZE docs;
});
my $port = $node->port;
$node->safe_psql('postgres', qq{
	CREATE EXTENSION ndd;
	CREATE EXTENSION postgres_fdw;
	CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (dbname 'shard', port '$port', extensions 'ndd');
	CREATE USER MAPPING FOR CURRENT_USER SERVER shard;
	CREATE FOREIGN TABLE docs (id int, sketch minhash) SERVER shard;
});

my $plan = $node->safe_psql('postgres', q{
	EXPLAIN (VERBOSE, COSTS OFF)
	SELECT id FROM docs
	WHERE similar(sketch, 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:empty'::minhash, 0.7)});
like($plan, qr/Remote SQL:.*similar"?\(sketch/s, 'similar() is pushed down to the shard');

my $plan_guc = $node->safe_psql('postgres', q{
	EXPLAIN (VERBOSE, COSTS OFF)
	SELECT id FROM docs WHERE sketch % (SELECT sketch FROM docs LIMIT 1)});
unlike($plan_guc, qr/Remote SQL:[^\n]*%/, '% (which reads a setting) is evaluated locally');

# the same answer through the foreign table as on the shard itself
my $q = q{(SELECT sketch FROM docs WHERE id = 301)};
my $local = $node->safe_psql('postgres',
	"SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE similar(sketch, $q, 0.7)");
my $remote = $node->safe_psql('shard',
	"SET enable_seqscan = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE similar(sketch, $q, 0.7)");
is($local, $remote, "foreign and shard-side answers agree ($local)");
is($local, '300,301,302', 'the probe finds its two near-duplicates and itself');

# simhash: similar(fp, q, max_distance) is IMMUTABLE too, and pushed down
$node->safe_psql('shard', q{
	CREATE TABLE fps (id int PRIMARY KEY, fp simhash);
	INSERT INTO fps SELECT g, simhash_from_bigint(hashint8extended(g / 2, 7) # (g % 2)) FROM generate_series(1, 3000) g;
	CREATE INDEX ON fps USING gin (fp simhash_ops);
	ANALYZE fps;});
$node->safe_psql('postgres', 'CREATE FOREIGN TABLE fps (id int, fp simhash) SERVER shard');
$plan = $node->safe_psql('postgres', q{
	EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM fps WHERE similar(fp, '0123456789abcdef', 3)});
like($plan, qr/Remote SQL:.*similar"?\(fp/s, 'similar() for simhash is pushed down to the shard');
$q = q{(SELECT fp FROM fps WHERE id = 301)};
$local = $node->safe_psql('postgres',
	"SELECT string_agg(id::text, ',' ORDER BY id) FROM fps WHERE similar(fp, $q, 3)");
$remote = $node->safe_psql('shard',
	"SET enable_seqscan = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM fps WHERE similar(fp, $q, 3)");
is($local, $remote, "foreign and shard-side simhash answers agree ($local)");
is($local, '300,301', 'the probe finds its near-duplicate and itself');

$node->stop;
done_testing();
