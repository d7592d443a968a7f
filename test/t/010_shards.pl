# ndd across shards: a coordinator whose documents table is hash-partitioned
# over two postgres_fdw shards (three clusters), against a one-server table
# holding the same rows.  Lookups are sent to the shards and answer as on one
# server; near_duplicate_pairs and near_duplicate_clusters give the
# one-server answers, pairs across shards included; the insert guard on the
# coordinator serializes near-duplicates bound for different shards, and
# under postgres_fdw's per-transaction shard snapshots it fails with 40001
# rather than let a near-duplicate in.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $t0 = time;
my $coord = PostgreSQL::Test::Cluster->new('coordinator');
my @shards = map { PostgreSQL::Test::Cluster->new("shard$_") } (1, 2);
for my $node ($coord, @shards)
{
	$node->init;
	$node->start;
}

for my $shard (@shards)
{
	$shard->safe_psql('postgres', q{
		CREATE EXTENSION ndd;
		CREATE TABLE docs (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
		CREATE INDEX ON docs USING gin (sketch minhash_ops);
		CREATE INDEX ON docs USING gin (fp simhash_ops);});
}

my $servers = '';
for my $i (0, 1)
{
	my ($host, $port) = ($shards[$i]->host, $shards[$i]->port);
	$servers .= qq{
		CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
			OPTIONS (host '$host', port '$port', dbname 'postgres', extensions 'ndd', async_capable 'true');
		CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i;
		CREATE FOREIGN TABLE docs_$i PARTITION OF docs FOR VALUES WITH (modulus 2, remainder $i)
			SERVER shard$i OPTIONS (table_name 'docs');};
}
# 1,000 families of one to three members whose ids (7f + m) scatter them
# over both shards; members differ by a word or two
$coord->safe_psql('postgres', qq{
	CREATE EXTENSION ndd;
	CREATE EXTENSION postgres_fdw;
	CREATE TABLE docs (id bigint, body text, sketch minhash, fp simhash) PARTITION BY HASH (id);
	$servers
	CREATE TABLE single (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
	INSERT INTO single
	SELECT f * 7 + m, b, minhash_sketch(b), simhash(doc => b)
	FROM (SELECT f, m, (SELECT string_agg('w' || (f * 1000 + i), ' ') FROM generate_series(1, 40) i)
						|| CASE WHEN m > 0 THEN ' extra' || m ELSE '' END AS b
		  FROM generate_series(1, 1000) f, generate_series(0, 2) m WHERE m <= f % 3) s;
	CREATE INDEX ON single USING gin (sketch minhash_ops);
	CREATE INDEX ON single USING gin (fp simhash_ops);
	ANALYZE single;
	INSERT INTO docs SELECT * FROM single;
	ANALYZE docs;});
is($coord->safe_psql('postgres',
	q{SELECT count(DISTINCT tableoid) || ' ' || count(*) FROM docs}), '2 2000',
	'the rows are spread over both shards');

# sorted text of a query's answer on one table
sub answer
{
	my ($node, $sql) = @_;
	return $node->safe_psql('postgres', "SELECT coalesce(string_agg(x::text, ';' ORDER BY x::text), '') FROM ($sql) x");
}

# 1. Lookups
my $plan = $coord->safe_psql('postgres', q{
	EXPLAIN (VERBOSE, COSTS OFF)
	SELECT id FROM docs WHERE similar(sketch, (SELECT sketch FROM single WHERE id = 8), 0.8)});
is(scalar(() = $plan =~ /Remote SQL: [^\n]*similar"?\(sketch/g), 2, 'similar() is in the Remote SQL of both shards');
like($plan, qr/Async Foreign Scan/, 'the shards are read at once');

my ($same, $found) = (0, 0);
my @probes = map { $_ * 50 + 1 } (0 .. 19);
for my $id (@probes)
{
	my $q = "(SELECT sketch FROM single WHERE id = (SELECT min(id) FROM single WHERE id >= $id))";
	my $one = answer($coord, "SELECT id FROM single WHERE similar(sketch, $q, 0.8)");
	my $sharded = answer($coord, "SELECT id FROM docs WHERE similar(sketch, $q, 0.8)");
	$same++ if $one eq $sharded;
	$found += scalar(split /;/, $one);
}
is($same, scalar(@probes), 'minhash lookups across shards answer as on one server');
cmp_ok($found, '>', scalar(@probes), 'and those answers include near-duplicates');

$plan = $coord->safe_psql('postgres', q{
	EXPLAIN (VERBOSE, COSTS OFF)
	SELECT id FROM docs WHERE similar(fp, (SELECT fp FROM single WHERE id = 8), 3)});
is(scalar(() = $plan =~ /Remote SQL: [^\n]*similar"?\(fp/g), 2, 'similar() for simhash is in the Remote SQL of both shards');
my $shard_plan = $shards[0]->safe_psql('postgres', q{
	SET enable_seqscan = off;
	EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE similar(fp, '0123456789abcdef', 3)});
like($shard_plan, qr/Index Cond: \(fp % ROW/, 'where the shard\'s simhash_ops index serves it');
($same, $found) = (0, 0);
for my $id (@probes)
{
	my $q = "(SELECT fp FROM single WHERE id = (SELECT min(id) FROM single WHERE id >= $id))";
	my $one = answer($coord, "SELECT id FROM single WHERE hamming_distance(fp, $q) <= 3");
	my $sharded = answer($coord, "SELECT id FROM docs WHERE similar(fp, $q, 3)");
	$same++ if $one eq $sharded;
	$found += scalar(split /;/, $one);
}
is($same, scalar(@probes), 'simhash lookups across shards answer as on one server');
cmp_ok($found, '>', scalar(@probes), 'and those answers include near-duplicates');

# 2. Discovery and clusters
my $cross = $coord->safe_psql('postgres', q{
	SELECT count(*) FROM near_duplicate_pairs('single', 'sketch', 'id') p
	WHERE satisfies_hash_partition('docs'::regclass, 2, 0, p.id_a)
		  <> satisfies_hash_partition('docs'::regclass, 2, 0, p.id_b)});
cmp_ok($cross, '>=', 300, "pairs across shards are planted ($cross)");
for my $call (
	[ 'minhash pairs', q{near_duplicate_pairs('%s', 'sketch', 'id')} ],
	[ 'minhash pairs verified by the texts', q{near_duplicate_pairs('%s', 'sketch', 'id', verify_column => 'body')} ],
	[ 'minhash pairs at 0.5', q{near_duplicate_pairs('%s', 'sketch', 'id', 0.5)} ],
	[ 'simhash pairs', q{near_duplicate_pairs('%s', 'fp', 'id', max_distance => 3)} ],
	[ 'clusters', q{near_duplicate_clusters('%s', 'sketch', 'id')} ],
	[ 'clusters with a representative order', q{near_duplicate_clusters('%s', 'sketch', 'id', representative_order => 'length(body) DESC')} ])
{
	my ($what, $f) = @$call;
	my $one = answer($coord, 'SELECT * FROM ' . sprintf($f, 'single'));
	my $sharded = answer($coord, 'SELECT * FROM ' . sprintf($f, 'docs'));
	ok($one ne '' && $one eq $sharded, "$what across shards equal those on one server");
}

# what discovery fetched: only rows that may have a near-duplicate
my $notices = '';
$coord->psql('postgres', q{SELECT count(*) FROM near_duplicate_pairs('docs', 'sketch', 'id', progress => true)},
	stderr => \$notices);
my ($sent) = $notices =~ /(\d+) rows sent by the shards/;
my $with_pair = $coord->safe_psql('postgres', q{
	SELECT count(DISTINCT id) FROM near_duplicate_pairs('single', 'sketch', 'id') p, LATERAL (VALUES (p.id_a), (p.id_b)) v(id)});
ok(defined $sent && $sent >= $with_pair && $sent < 2000,
	"the shards sent " . ($sent // '?') . " of 2000 rows ($with_pair have a near-duplicate)");

# a sketch made otherwise on a shard (whose minhash_ops index would refuse
# it, so the index goes for a while): each shard compares its sketches with
# the first, and the error says what the shard found, as on one server
# (22023); nothing is sent
$_->safe_psql('postgres', 'DROP INDEX docs_sketch_idx') for @shards;
$coord->safe_psql('postgres', q{INSERT INTO docs VALUES (1000001, 'odd one', minhash_sketch('odd one', num_perm => 64), NULL)});
my ($mret, $mout, $merr) = $coord->psql('postgres',
	q{\set VERBOSITY verbose
	  SELECT count(*) FROM near_duplicate_pairs('docs', 'sketch', 'id')});
like($merr, qr/22023: column "sketch" of relation "docs" holds minhash sketches made in different ways/,
	'mixed sketches on a shard are refused with 22023');
like($merr, qr/DETAIL:  A shard reported: .*num_perm/, 'naming what the shard found');
$coord->safe_psql('postgres', q{DELETE FROM docs WHERE id = 1000001});
$_->safe_psql('postgres', 'CREATE INDEX docs_sketch_idx ON docs USING gin (sketch minhash_ops)') for @shards;

# 3. The insert guard on the coordinator
$coord->safe_psql('postgres', q{
	CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON docs
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
	CREATE FUNCTION doc(variant text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
		SELECT 'near duplicate detection inside postgres finds copies of crawled pages '
			|| 'articles tickets and product listings with plain sql and every answer '
			|| 'is transactional because the data never leaves the database ' || variant $$;});
# two fresh ids on different shards
my ($id_a, $id_b) = split /\|/, $coord->safe_psql('postgres', q{
	SELECT min(g) FILTER (WHERE satisfies_hash_partition('docs'::regclass, 2, 0, g)),
		   min(g) FILTER (WHERE satisfies_hash_partition('docs'::regclass, 2, 1, g))
	FROM generate_series(100000::bigint, 100100) g});
my $row = sub { my ($id, $v) = @_; return "INSERT INTO docs VALUES ($id, doc('$v'), minhash_sketch(doc('$v')))" };

my ($ret, $out, $err) = $coord->psql('postgres', $row->($id_a, 'alpha'));
like($err, qr/needs REPEATABLE READ or SERIALIZABLE/, 'under READ COMMITTED the guard refuses to check across shards');
$coord->safe_psql('postgres', q{ALTER DATABASE postgres SET default_transaction_isolation = 'repeatable read'});

# a near-duplicate of a committed row on the other shard
$coord->safe_psql('postgres', $row->($id_a, 'alpha'));
($ret, $out, $err) = $coord->psql('postgres', $row->($id_b, 'beta'));
like($err, qr/near-duplicate of an existing row/, 'a near-duplicate of a row on the other shard is rejected');
$coord->safe_psql('postgres', "DELETE FROM docs WHERE id IN ($id_a, $id_b)");

# the race: the second waits for the first's tokens, then fails with 40001
my $s1 = $coord->background_psql('postgres', on_error_stop => 0);
my $s2 = $coord->background_psql('postgres', on_error_stop => 0);
$s1->query_safe('BEGIN');
$s1->query_safe($row->($id_a, 'gamma'));
$s2->query_safe('BEGIN');
$s2->query_until(qr/started/, "\\echo started\n" . $row->($id_b, 'delta') . ";\n");
ok($coord->poll_query_until('postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT%'}),
	'the second near-duplicate waits for the first');
$s1->query_safe('COMMIT');
$s2->query('SELECT 1');
like($s2->{stderr}, qr/could not serialize access/, 'and fails with a serialization failure once the first commits');
$s2->{stderr} = '';
$s2->query('ROLLBACK');
is($coord->safe_psql('postgres', "SELECT string_agg(id::text, ',') FROM docs WHERE id IN ($id_a, $id_b)"),
	$id_a, 'only the first near-duplicate is stored');
$coord->safe_psql('postgres', "DELETE FROM docs WHERE id IN ($id_a, $id_b)");

# the shards' snapshots are older than a near-duplicate committed meanwhile:
# the guard cannot see it there, so it must fail rather than let it in
$s2->query_safe('BEGIN');
$s2->query_safe('SELECT count(*) FROM docs');
$coord->safe_psql('postgres', $row->($id_a, 'epsilon'));
$s2->query($row->($id_b, 'zeta'));
like($s2->{stderr}, qr/could not serialize access/,
	'a near-duplicate committed after the shards were first read fails the insert with 40001');
$s2->{stderr} = '';
$s2->query('ROLLBACK');
is($coord->safe_psql('postgres', "SELECT string_agg(id::text, ',') FROM docs WHERE id IN ($id_a, $id_b)"),
	$id_a, 'and only one of the two is stored');
$s1->quit;
$s2->quit;

# a simhash guard: the distance test is sent to the shards too
$coord->safe_psql('postgres', q{
	CREATE TRIGGER no_near_fingerprints BEFORE INSERT OR UPDATE ON docs
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3');});
my $other = $coord->safe_psql('postgres', qq{
	SELECT CASE WHEN satisfies_hash_partition('docs'::regclass, 2, 0, 8::bigint) THEN $id_b ELSE $id_a END});
($ret, $out, $err) = $coord->psql('postgres',
	"INSERT INTO docs SELECT $other, 'x', NULL, simhash_from_bigint(simhash_to_bigint(fp) # 5) FROM single WHERE id = 8");
like($err, qr/near-duplicate of an existing row.*bits away/s,
	'a fingerprint 2 bits from one on the other shard is rejected');

# the statement-level guard does not check across shards (PostgreSQL
# itself collects no transition tuples from foreign partitions)
$coord->safe_psql('postgres', q{
	DROP TRIGGER no_near_duplicates ON docs;
	DROP TRIGGER no_near_fingerprints ON docs;
	CREATE TRIGGER no_near_duplicates AFTER INSERT ON docs REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');});
($ret, $out, $err) = $coord->psql('postgres', $row->($id_b, 'eta'));
like($err, qr/transition tuples from child foreign tables|which has foreign partitions/,
	'a statement-level guard refuses a table with foreign partitions');

note sprintf('010_shards took %.1f s', time - $t0);
$_->stop for ($coord, @shards);
done_testing();
