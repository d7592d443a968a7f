# ndd on Citus: a coordinator and two workers, a documents table distributed
# by id over four shards, against a local table holding the same rows.
# Skipped unless Citus is installed for this PostgreSQL (scripts/citus.sh
# build; scripts/test_all.sh builds it for 18).
#
# Lookups and top-k go to the shards, where the shards' indexes serve them,
# and answer as on one server.  near_duplicate_pairs and
# near_duplicate_clusters do not run on a distributed table (0A000, Citus
# cannot plan their verification join); the map-reduce of docs/operations.md,
# "Distributing with Citus", run over the distributed table, gives their
# one-server answers.
# The insert guard is refused by Citus on a distributed table; forced, it
# checks each shard on its own.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $t0 = time;
my $coord = PostgreSQL::Test::Cluster->new('coordinator');
my $libdir = $coord->config_data('--pkglibdir');
plan skip_all => "Citus is not installed for this PostgreSQL ($libdir/citus.so; scripts/citus.sh build)"
  unless -f "$libdir/citus.so";

my @workers = map { PostgreSQL::Test::Cluster->new("worker$_") } (1, 2);
for my $node ($coord, @workers)
{
	$node->init;
	$node->append_conf('postgresql.conf', qq{
		shared_preload_libraries = 'citus'
		citus.enable_statistics_collection = off
		max_connections = 40});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
}
# the workers are reached through their socket directories; ndd is created
# on the coordinator only, and Citus creates it on the workers
$coord->safe_psql('postgres', sprintf(q{
	SELECT citus_set_coordinator_host('%s', %d);
	SELECT citus_add_node('%s', %d);
	SELECT citus_add_node('%s', %d);
	CREATE EXTENSION ndd;},
	$coord->host, $coord->port, map { ($_->host, $_->port) } @workers));
is(join(' ', map { $_->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'ndd'}) } @workers),
	join(' ', ($coord->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'ndd'})) x 2),
	'CREATE EXTENSION ndd on the coordinator installs it on both workers');

# 1,000 families of one to three members (ids 7f + m) that differ by a word
# or two, as in 010_shards; docs is distributed, single is local
$coord->safe_psql('postgres', q{
	CREATE TABLE single (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
	INSERT INTO single
	SELECT f * 7 + m, b, minhash_sketch(b), simhash(doc => b)
	FROM (SELECT f, m, (SELECT string_agg('w' || (f * 1000 + i), ' ') FROM generate_series(1, 40) i)
						|| CASE WHEN m > 0 THEN ' extra' || m ELSE '' END AS b
		  FROM generate_series(1, 1000) f, generate_series(0, 2) m WHERE m <= f % 3) s;
	CREATE TABLE docs (LIKE single INCLUDING ALL);
	SELECT create_distributed_table('docs', 'id', shard_count => 4);
	INSERT INTO docs SELECT * FROM single;
	CREATE INDEX ON single USING gin (sketch minhash_ops);
	CREATE INDEX ON single USING gin (fp simhash_ops);
	CREATE INDEX single_topk ON single USING gin (sketch minhash_ops(rows = 1, key_bits = 16));
	CREATE INDEX ON docs USING gin (sketch minhash_ops);
	CREATE INDEX ON docs USING gin (fp simhash_ops);
	CREATE INDEX docs_topk ON docs USING gin (sketch minhash_ops(rows = 1, key_bits = 16));
	ANALYZE single;
	ANALYZE docs;});
is($coord->safe_psql('postgres', q{
	SELECT count(DISTINCT nodeport) || ' ' || count(*) FROM citus_shards WHERE table_name = 'docs'::regclass}),
	'2 4', 'docs has four shards on two workers');
my $shard_indexes = 0;
$shard_indexes += $_->safe_psql('postgres', q{
	SET citus.override_table_visibility = off;
	SELECT count(*) FROM pg_indexes WHERE tablename ~ '^docs_\d+$'
	AND indexdef LIKE '%USING gin%'}) for @workers;
is($shard_indexes, 12, 'every shard has its three GIN indexes (minhash_ops, simhash_ops, top-k)');

# sorted text of a query's answer
sub answer
{
	my ($sql) = @_;
	return $coord->safe_psql('postgres',
		"SELECT coalesce(string_agg(x::text, ';' ORDER BY x::text), '') FROM ($sql) x");
}

# 1. Lookups: similar() is sent to every shard, whose index serves it
my $sketch8 = $coord->safe_psql('postgres', 'SELECT sketch FROM single WHERE id = 8');
my $fp8 = $coord->safe_psql('postgres', 'SELECT fp FROM single WHERE id = 8');
# (a minhash lookup is ndd's lookup scan, which names the index it reads)
for my $q ([ 'minhash', "similar(sketch, '$sketch8', 0.8)", qr/(?:Bitmap Index Scan on|Index Name:) docs_sketch_idx_\d+/ ],
	[ 'simhash', "similar(fp, '$fp8', 3)", qr/Bitmap Index Scan on docs_fp_idx_\d+/ ])
{
	my ($what, $cond, $index) = @$q;
	my $plan = $coord->safe_psql('postgres', qq{
		SET citus.propagate_set_commands = 'local';
		SET citus.explain_all_tasks = on;
		BEGIN;
		SET LOCAL enable_seqscan = off;
		EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE $cond;
		COMMIT;});
	is(scalar(() = $plan =~ /$index/g), 4, "a $what lookup runs on the four shards, through their indexes");
}
my ($same_m, $same_s, $found) = (0, 0, 0);
my @probes = map { $_ * 50 + 1 } (0 .. 19);
for my $id (@probes)
{
	my ($sk, $fp) = split /\|/, $coord->safe_psql('postgres',
		"SELECT sketch, fp FROM single WHERE id = (SELECT min(id) FROM single WHERE id >= $id)");
	my $one = answer("SELECT id FROM single WHERE similar(sketch, '$sk', 0.8)");
	$same_m++ if $one eq answer("SELECT id FROM docs WHERE similar(sketch, '$sk', 0.8)");
	$found += scalar(split /;/, $one);
	$same_s++ if answer("SELECT id FROM single WHERE hamming_distance(fp, '$fp') <= 3")
	  eq answer("SELECT id FROM docs WHERE similar(fp, '$fp', 3)");
}
is($same_m, scalar(@probes), 'minhash lookups on the distributed table answer as on one server');
cmp_ok($found, '>', scalar(@probes), 'and those answers include near-duplicates');
is($same_s, scalar(@probes), 'simhash lookups on the distributed table answer as on one server');
# % reads ndd.similarity_threshold where it runs: on the workers, whose
# sessions do not get the coordinator's SET
is($coord->safe_psql('postgres', qq{
	SET ndd.similarity_threshold = 0.99;
	SELECT (SELECT count(*) FROM single WHERE sketch % '$sketch8') || ' ' || (SELECT count(*) FROM docs WHERE sketch % '$sketch8')}),
	'1 2', '% on the distributed table uses the workers\' threshold (0.8), not the coordinator\'s (0.99)');

# 2. Top-k: passes of similar() sent to the shards (counting, which reads
# the coordinator's empty shell of the table, is skipped)
my $same = 0;
for my $id (@probes)
{
	my $q = "(SELECT sketch FROM single WHERE id = (SELECT min(id) FROM single WHERE id >= $id))";
	$same++ if answer("SELECT * FROM near_duplicate_top_k('single', 'sketch', 'id', $q, 5)")
	  eq answer("SELECT * FROM near_duplicate_top_k('docs', 'sketch', 'id', $q, 5)");
}
is($same, scalar(@probes), 'near_duplicate_top_k on the distributed table answers as on one server');
# counting would read the coordinator's empty shell of the table: it says it
# cannot answer (its NULLs), and the passes above answered instead
is($coord->safe_psql('postgres', qq{
	SELECT ids IS NULL FROM minhash_index_top_k('docs', 'sketch', 'id', '$sketch8', 5)}), 't',
	'minhash_index_top_k cannot answer on a distributed table');
# what a pass sends: the order and limit go to every shard, with similar()
# served by the shard's index
my $plan = $coord->safe_psql('postgres', qq{
	SET citus.propagate_set_commands = 'local';
	SET citus.explain_all_tasks = on;
	BEGIN;
	SET LOCAL enable_seqscan = off;
	EXPLAIN (COSTS OFF) SELECT id, similarity(sketch, '$sketch8') FROM docs
	WHERE similar(sketch, '$sketch8', 0.5) ORDER BY 2 DESC, id LIMIT 5;
	COMMIT;});
is(scalar(() = $plan =~ /Limit\s+->\s+Sort\s+Sort Key: [^\n]*\s+->\s+(?:Bitmap Heap Scan|Custom Scan \(NddMinhashLookup\)) on docs_\d+/g), 4,
	'a pass of top-k is sent to the four shards with its order and limit, through their indexes');
# progress => true EXPLAINs each pass with its parameters, which Citus
# cannot send to the workers
my ($ret, $out, $err) = $coord->psql('postgres',
	"SELECT count(*) FROM near_duplicate_top_k('docs', 'sketch', 'id', '$sketch8', 2, progress => true)");
like($err, qr/current transaction is aborted/, 'near_duplicate_top_k with progress => true fails on a distributed table');

# 3. Discovery and clusters
for my $f ('near_duplicate_pairs', 'near_duplicate_clusters')
{
	my ($ret, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose\nSELECT count(*) FROM $f('docs', 'sketch', 'id')");
	like($err, qr/0A000: complex joins are only supported when all distributed tables are co-located/,
		"$f on a distributed table fails with 0A000");
}

# The map-reduce of docs/operations.md, "Distributing with Citus": keys to a table distributed by
# key, candidates reduced where their keys meet, then verified.  $keys: a
# row's keys (of d), $required: keys a pair must share, $pair: (score,
# distance) of x and y, $test: that they qualify.
sub map_reduce
{
	my ($keys, $required, $pair, $test) = @_;
	$coord->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS doc_keys, doc_candidates, doc_pairs;
		SET citus.enable_repartition_joins = on;
		CREATE TABLE doc_keys (band_key bigint, id bigint);
		SELECT create_distributed_table('doc_keys', 'band_key');
		INSERT INTO doc_keys SELECT k, d.id FROM docs d, unnest($keys) k;
		CREATE TABLE doc_candidates (id_a bigint, id_b bigint);
		SELECT create_distributed_table('doc_candidates', 'id_a', colocate_with => 'docs');
		INSERT INTO doc_candidates
		SELECT a.id, b.id FROM doc_keys a JOIN doc_keys b ON b.band_key = a.band_key AND b.id > a.id
		GROUP BY a.id, b.id HAVING count(*) >= $required;
		CREATE TABLE doc_pairs (id_a bigint, id_b bigint, similarity float8, distance int);
		SELECT create_distributed_table('doc_pairs', 'id_a', colocate_with => 'docs');
		INSERT INTO doc_pairs
		SELECT c.id_a, c.id_b, $pair
		FROM doc_candidates c JOIN docs x ON x.id = c.id_a JOIN docs y ON y.id = c.id_b
		WHERE $test;});
	return answer('SELECT * FROM doc_pairs');
}

my $cross = $coord->safe_psql('postgres', q{
	SELECT count(*) FROM near_duplicate_pairs('single', 'sketch', 'id') p
	WHERE get_shard_id_for_distribution_column('docs', p.id_a) <> get_shard_id_for_distribution_column('docs', p.id_b)});
cmp_ok($cross, '>=', 300, "pairs across shards are planted ($cross)");
for my $t (0.8, 0.5)
{
	my ($bands, $rows, $required) = split /\|/, $coord->safe_psql('postgres',
		"SELECT bands, rows, required FROM lsh_banding((SELECT sketch FROM single LIMIT 1), $t)");
	my $one = answer("SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id', $t)");
	my $mr = map_reduce("minhash_band_keys(d.sketch, $bands, $rows)", $required,
		'similarity(x.sketch, y.sketch), NULL', "similarity(x.sketch, y.sketch) >= $t");
	ok($one ne '' && $one eq $mr,
		"minhash pairs at $t by map-reduce ($bands bands of $rows, $required shared) equal near_duplicate_pairs on one server");
	next unless $t == 0.8;
	$one = answer(q{SELECT * FROM near_duplicate_clusters('single', 'sketch', 'id')});
	my $clusters = answer(q{
		SELECT c.l[i][1] AS id, c.l[i][2] AS cluster_id
		FROM (SELECT ndd_components(p.id_a, p.id_b) AS l FROM doc_pairs p) c, generate_subscripts(c.l, 1) i});
	ok($one ne '' && $one eq $clusters, 'clusters by ndd_components over those pairs equal near_duplicate_clusters');
}
my $one = answer(q{SELECT * FROM near_duplicate_pairs('single', 'fp', 'id', max_distance => 3)});
my $mr = map_reduce('simhash_keys(d.fp, 3)', 1,
	'simhash_cosine(x.fp, y.fp), hamming_distance(x.fp, y.fp)', 'hamming_distance(x.fp, y.fp) <= 3');
ok($one ne '' && $one eq $mr, 'simhash pairs within 3 bits by map-reduce equal near_duplicate_pairs on one server');

# 4. The insert guard: Citus refuses triggers on a distributed table, and
# ndd_maintain_clusters cannot build its table (it runs discovery)
($ret, $out, $err) = $coord->psql('postgres', q{
	\set VERBOSITY verbose
	CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON docs
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8')});
like($err, qr/XX000: triggers are not supported on distributed tables/, 'Citus refuses the guard on a distributed table');
($ret, $out, $err) = $coord->psql('postgres', q{
	\set VERBOSITY verbose
	SELECT ndd_maintain_clusters('docs', 'sketch', 'id')});
like($err, qr/0A000: complex joins/, 'ndd_maintain_clusters on a distributed table fails with 0A000');
is($coord->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relname = 'docs_clusters'}), '0',
	'and leaves nothing behind');

# forced (citus.enable_unsafe_triggers, which Citus reads at CREATE TRIGGER
# only), the trigger is created on every shard and checks that shard alone: a near-duplicate bound for the shard
# of its original is rejected with 23505, one bound for another shard is not
$coord->safe_psql('postgres', q{
	SET citus.enable_unsafe_triggers = on;
	CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON docs
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');});
my $triggers = 0;
$triggers += $_->safe_psql('postgres', q{
	SET citus.override_table_visibility = off;
	SELECT count(*) FROM pg_trigger WHERE tgname ~ '^no_near_duplicates' AND tgrelid::regclass::text ~ '^docs_\d+$'})
  for @workers;
is($triggers, 4, 'forced, the trigger is created on each of the four shards');
my ($same_shard, $other_shard) = split /\|/, $coord->safe_psql('postgres', q{
	SELECT min(g) FILTER (WHERE get_shard_id_for_distribution_column('docs', g) = get_shard_id_for_distribution_column('docs', 8)),
		   min(g) FILTER (WHERE get_shard_id_for_distribution_column('docs', g) <> get_shard_id_for_distribution_column('docs', 8))
	FROM generate_series(100000::bigint, 100100) g});
($ret, $out, $err) = $coord->psql('postgres',
	"\\set VERBOSITY verbose\nINSERT INTO docs (id, body, sketch) VALUES ($same_shard, 'copy', '$sketch8')");
like($err, qr/23505: new row for relation "docs_\d+" is a near-duplicate of an existing row/,
	'a near-duplicate bound for the shard of its original is rejected (23505), naming the shard');
($ret, $out, $err) = $coord->psql('postgres',
	"\\set VERBOSITY verbose\nINSERT INTO docs (id, body, sketch) VALUES ($other_shard, 'copy', '$sketch8')");
is($ret, 0, 'a near-duplicate bound for another shard is not: the check sees its own shard only');
($ret, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose\n"
	  . "INSERT INTO docs (id, body, sketch) SELECT $same_shard, 'copy', sketch FROM single WHERE id = 8");
like($err, qr/XX000: new row for relation "docs_\d+" is a near-duplicate/,
	'INSERT ... SELECT, which Citus runs as COPY, reports the rejection as XX000');

note sprintf('011_citus took %.1f s', time - $t0);
$_->stop for ($coord, @workers);
done_testing();
