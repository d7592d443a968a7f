# ndd on Citus: a coordinator and two workers, a documents table distributed
# by id over four shards, against a local table holding the same rows.
# Skipped unless Citus is installed for this PostgreSQL (scripts/citus.sh
# build; scripts/test_all.sh builds it for 18).
#
# Lookups and top-k go to the shards, where the shards' indexes serve them,
# and answer as on one server.  near_duplicate_pairs and
# near_duplicate_clusters run on a distributed table as a map-reduce that
# Citus runs on the workers (pairs_citus.c), with the one-server answers:
# on a table distributed by its bigint id, and on one distributed by
# another column; nothing of the map-reduce is left on any node after
# success or error; clusters are computed on the workers (large-star and
# small-star).  ndd_maintain_clusters refuses a distributed table
# (0A000).  The insert guard is refused by Citus on a distributed table;
# forced, it checks each shard on its own.
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
	-- 100 families of five copies of 60 words whose last 0, 2, 5, 10 or 18
	-- words differ (ids 200000 + 10f + m): Jaccard from about 0.45 to 0.95
	INSERT INTO single
	SELECT 200000 + f * 10 + m, b, minhash_sketch(b), simhash(doc => b)
	FROM (SELECT f, m, (SELECT string_agg(CASE WHEN i > 60 - (ARRAY[0, 2, 5, 10, 18])[m + 1]
											   THEN 'x' || (f * 1000 + m * 100 + i) ELSE 'g' || (f * 1000 + i) END, ' ')
						FROM generate_series(1, 60) i) AS b
		  FROM generate_series(1, 100) f, generate_series(0, 4) m) s;
	-- a chain of 80 windows of 60 words, each one word on from the last
	-- (ids 300000 + k): one cluster of long paths
	INSERT INTO single
	SELECT 300000 + k, b, minhash_sketch(b), simhash(doc => b)
	FROM (SELECT k, (SELECT string_agg('c' || i, ' ') FROM generate_series(k, k + 59) i) AS b
		  FROM generate_series(0, 79) k) s;
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
# SET LOCAL inside a transaction reaches them when Citus propagates it
is($coord->safe_psql('postgres', qq{
	BEGIN;
	SET LOCAL citus.propagate_set_commands = 'local';
	SET LOCAL ndd.similarity_threshold = 0.99;
	SELECT (SELECT count(*) FROM single WHERE sketch % '$sketch8') || ' ' || (SELECT count(*) FROM docs WHERE sketch % '$sketch8');
	COMMIT;}),
	'1 1', '% uses the coordinator\'s SET LOCAL threshold where citus.propagate_set_commands = local sends it');

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

# 3. Discovery and clusters: the same answers as on one server, on docs
# (distributed by its bigint id, which the map-reduce's tables are colocated
# with) and on by_tenant (distributed by another column, whose ids and
# sketches the map-reduce copies first)
$coord->safe_psql('postgres', q{
	CREATE TABLE by_tenant (tenant int, id bigint, body text, sketch minhash, fp simhash);
	SELECT create_distributed_table('by_tenant', 'tenant', shard_count => 3);
	INSERT INTO by_tenant SELECT id % 5, id, body, sketch, fp FROM single;});
my $cross = $coord->safe_psql('postgres', q{
	SELECT count(*) FROM near_duplicate_pairs('single', 'sketch', 'id') p
	WHERE get_shard_id_for_distribution_column('docs', p.id_a) <> get_shard_id_for_distribution_column('docs', p.id_b)});
cmp_ok($cross, '>=', 300, "pairs across shards are planted ($cross)");
isnt(answer(q{SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id', 0.5)}),
	answer(q{SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id', 0.8)}),
	'the graded families give other pairs at 0.5 than at 0.8');
isnt(answer(q{SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id', 0.8, verify_column => 'body')}),
	answer(q{SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id', 0.8)}),
	'and verification changes the pairs at 0.8');
# the work tables of a call, on every node
sub work_tables
{
	my $n = 0;
	$n += $_->safe_psql('postgres', q{
		SET citus.override_table_visibility = off;
		SELECT count(*) FROM pg_class WHERE relname LIKE 'ndd\_pairs\_%'}) for ($coord, @workers);
	return $n;
}
for my $call ([ 'pairs at 0.8', q{near_duplicate_pairs('%s', 'sketch', 'id', 0.8)} ],
	[ 'pairs at 0.5', q{near_duplicate_pairs('%s', 'sketch', 'id', 0.5)} ],
	[ 'simhash pairs within 3 bits', q{near_duplicate_pairs('%s', 'fp', 'id', max_distance => 3)} ],
	[ 'verified pairs at 0.8', q{near_duplicate_pairs('%s', 'sketch', 'id', 0.8, verify_column => 'body')} ],
	[ 'clusters at 0.8', q{near_duplicate_clusters('%s', 'sketch', 'id')} ],
	[ 'verified clusters at 0.8', q{near_duplicate_clusters('%s', 'sketch', 'id', 0.8, verify_column => 'body')} ],
	[ 'simhash clusters', q{near_duplicate_clusters('%s', 'fp', 'id', max_distance => 3)} ])
{
	my ($what, $f) = @$call;
	my $one = answer('SELECT * FROM ' . sprintf($f, 'single'));
	for my $t ('docs', 'by_tenant')
	{
		is(answer('SELECT * FROM ' . sprintf($f, $t)), $one, "$what on $t equal the one-server answer");
	}
	ok($one ne '', "($what: not empty)");
}
is(work_tables(), 0, 'no work table is left on any node');
# the session's settings do not change what runs: a table made with two
# placements a shard (its work tables get as many, to be colocated with
# it), and columnar as the default access method (the work tables are heap)
$coord->safe_psql('postgres', q{
	SET citus.shard_replication_factor = 2;
	CREATE TABLE replicated (LIKE single);
	SELECT create_distributed_table('replicated', 'id', shard_count => 2);
	INSERT INTO replicated SELECT * FROM single;});
is(answer(q{SELECT * FROM near_duplicate_pairs('replicated', 'sketch', 'id')}),
	answer(q{SELECT * FROM near_duplicate_pairs('single', 'sketch', 'id')}),
	'pairs on a table of two placements a shard equal the one-server answer');
is($coord->safe_psql('postgres', q{
	CREATE EXTENSION IF NOT EXISTS citus_columnar;
	SET default_table_access_method = columnar;
	SELECT coalesce(string_agg(x::text, ';' ORDER BY x::text), '') FROM near_duplicate_clusters('docs', 'sketch', 'id') x}),
	answer(q{SELECT * FROM near_duplicate_clusters('single', 'sketch', 'id')}),
	'clusters with columnar as the default access method equal the one-server answer');
is($coord->safe_psql('postgres', q{SHOW citus.shard_replication_factor}), '1',
	'and the call leaves the session\'s settings as they were');
# the components on the workers: rounds of large-star and small-star, more
# than one for the chain, until one changes nothing
($ret, $out, $err) = $coord->psql('postgres',
	q{SELECT count(*) FROM near_duplicate_clusters('docs', 'sketch', 'id', progress => true)});
my @rounds = $err =~ m{NOTICE:  ndd: components, round \d+: (\d+) edges changed}g;
cmp_ok(scalar(@rounds), '>=', 3, 'clusters on docs take rounds on the workers (' . scalar(@rounds) . ')');
is($rounds[-1], '0', 'the last of them changes no edge');
($ret, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose\n"
	  . q{SELECT count(*) FROM near_duplicate_clusters('docs', 'sketch', 'id', representative_order => 'id DESC')});
like($err, qr/0A000: representative_order is not supported on a table distributed by Citus/,
	'representative_order on a distributed table fails with 0A000');
# progress => true: the steps' NOTICEs with their counts
($ret, $out, $err) = $coord->psql('postgres',
	q{SELECT count(*) FROM near_duplicate_pairs('docs', 'sketch', 'id', progress => true)});
is(scalar(() = $err =~ m{NOTICE:  ndd: [1-4]/4 \d+ [a-z ]+\nDETAIL:  \S+ so far}g), 4,
	'progress => true reports the four steps with their counts and the time so far');
# an error after the work tables are made (an id out of bigint's range, in
# the copy of a table distributed otherwise) rolls them back on every node
$coord->safe_psql('postgres', q{
	CREATE TABLE numeric_ids (tenant int, id numeric, sketch minhash);
	SELECT create_distributed_table('numeric_ids', 'tenant', shard_count => 2);
	INSERT INTO numeric_ids SELECT id % 3, id, sketch FROM single;
	INSERT INTO numeric_ids SELECT 1, 1e30, sketch FROM single WHERE id = 8;});
($ret, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose\n"
	  . q{SELECT count(*) FROM near_duplicate_pairs('numeric_ids', 'sketch', 'id')});
like($err, qr/22003: bigint out of range/, 'an id out of range fails the map-reduce (22003)');
is(work_tables(), 0, 'and leaves no work table on any node');

# 4. The insert guard: Citus refuses triggers on a distributed table, and
# ndd_maintain_clusters, whose triggers keep its clusters, refuses it
($ret, $out, $err) = $coord->psql('postgres', q{
	\set VERBOSITY verbose
	CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON docs
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8')});
like($err, qr/XX000: triggers are not supported on distributed tables/, 'Citus refuses the guard on a distributed table');
($ret, $out, $err) = $coord->psql('postgres', q{
	\set VERBOSITY verbose
	SELECT ndd_maintain_clusters('docs', 'sketch', 'id')});
like($err, qr/0A000: clusters of relation "docs" cannot be kept current/,
	'ndd_maintain_clusters on a distributed table fails with 0A000');
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
