# ndd's indexes are crash- and replica-safe: they write their changes through
# PostgreSQL's GIN and GiST access methods, so after inserts, updates and
# deletes from concurrent clients a streaming standby answers every index
# query exactly as the primary does, a pg_basebackup taken under that load
# restores to indexes that agree with a scan, and after a crash (an immediate
# stop under load) recovery leaves indexes that return the same rows as a
# sequential scan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ndd;
	CREATE TABLE docs (id int PRIMARY KEY, mh minhash, fp simhash);
	CREATE INDEX docs_mh ON docs USING gin (mh minhash_ops(shingle_size = 1)) WITH (fastupdate = off);
	CREATE INDEX docs_mh_pending ON docs USING gin (mh minhash_ops(shingle_size = 1, threshold = 0.6));
	CREATE INDEX docs_fp ON docs USING gin (fp simhash_ops);
	CREATE INDEX docs_fp_gist ON docs USING gist (fp simhash_knn_ops);
	CREATE FUNCTION doc(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
		SELECT string_agg('f' || (i / 5) || 'w' || g, ' ') || ' x' || (i % 5)
		FROM generate_series(1, 40) g $$;
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(1, 2000) i;
	-- rows that concurrent clients update and delete
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(700001, 702000) i;});

# Concurrent load: four clients insert new rows, rewrite the sketches of
# existing ones (with other documents' content) and delete rows, each
# statement its own transaction.
my $load_script = PostgreSQL::Test::Utils::tempdir() . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($load_script, q{
\set new random(800001, 899999)
\set old random(700001, 702000)
\set other random(1, 4000)
INSERT INTO docs VALUES (:new, minhash_sketch(doc(:new), shingle_size => 1), simhash(doc(:new))) ON CONFLICT DO NOTHING;
UPDATE docs SET mh = minhash_sketch(doc(:other), shingle_size => 1), fp = simhash(doc(:other)) WHERE id = :old;
DELETE FROM docs WHERE id = :old + 1;
});

# start_load(NODE, PGBENCH-OPTIONS...): the load, in the background
sub start_load
{
	my ($node, @options) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '4', '-j', '2', @options, '-f', $load_script, $node->connstr('postgres') ],
		'>', \$out, '2>', \$err);
	return { handle => $h, out => \$out, err => \$err };
}

# a slot keeps the primary's WAL until the standby has it: without one, the
# checkpoints of the load and of the second base backup could remove a
# segment a lagging standby still needs ("requested WAL segment ... has
# already been removed", seen on a loaded machine)
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby')");
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;

# more rows after the base backup, and some gone: all of it reaches the
# standby as WAL of the index access methods
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(2001, 4000) i;
	DELETE FROM docs WHERE id % 7 = 0;
	VACUUM docs;});
$primary->wait_for_catchup($standby);

# the same lookups by index and by scan, as one text to compare
my $lookups = q{
	SET enable_seqscan = off;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs
	WHERE mh % ROW(minhash_sketch(doc(1234), shingle_size => 1), 0.7)::minhash_query;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs
	WHERE similar(mh, minhash_sketch(doc(3333), shingle_size => 1), 0.6);
	SET ndd.hamming_threshold = 6;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs WHERE fp % simhash(doc(2500));
	SELECT string_agg(s.id::text, ',') FROM (SELECT id FROM docs ORDER BY fp <-> simhash(doc(42)), id LIMIT 5) s;
	-- and how many rows match each of 42 probes, through each index
	-- (OFFSET 0: each probe's sketch is made once, not once per row)
	RESET ndd.hamming_threshold;
	SELECT string_agg(q.i || ':' || (SELECT count(*) FROM docs d WHERE d.mh % ROW(q.mh, 0.6)::minhash_query), ',')
	FROM (SELECT i, minhash_sketch(doc(i), shingle_size => 1) FROM generate_series(1, 4000, 97) i OFFSET 0) q(i, mh);
	SELECT string_agg(q.i || ':' || (SELECT count(*) FROM docs d WHERE d.fp % q.fp), ',')
	FROM (SELECT i, simhash(doc(i)) FROM generate_series(1, 4000, 97) i OFFSET 0) q(i, fp);
};
my $by_scan = q{
	SET enable_indexscan = off;
	SET enable_bitmapscan = off;
} . $lookups =~ s/SET enable_seqscan = off;//r;

# a load while a base backup is taken: the standby streams all of it, and
# the backup restores to a consistent state of its own
my $load = start_load($primary, '-t', '300');
$primary->backup('under_load');
$load->{handle}->finish;
is($load->{handle}->result(0), 0, 'the concurrent load ran without error')
	or diag ${ $load->{err} };
like($primary->safe_psql('postgres',
		'SELECT count(*) FILTER (WHERE id > 800000) > 0 AND count(*) FILTER (WHERE id BETWEEN 700001 AND 702000) < 2000 FROM docs'),
	qr/^t$/, 'the load inserted and deleted rows');
$primary->wait_for_catchup($standby);

my $primary_answers = $primary->safe_psql('postgres', $lookups);
like($primary_answers, qr/\d+,\d+/, 'the lookups find near-duplicates');
is($primary->safe_psql('postgres', $by_scan), $primary_answers,
	'on the primary the indexes answer as a scan does');
is($standby->safe_psql('postgres', $lookups), $primary_answers,
	'the standby answers every index lookup as the primary does');
is($standby->safe_psql('postgres', $by_scan), $primary_answers,
	'and its scans agree too');
like($standby->safe_psql('postgres', q{
	SET enable_seqscan = off;
	EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE fp % simhash(doc(2500))}),
	qr/Index Scan|Bitmap Index Scan/, 'the standby used an index');
is($standby->safe_psql('postgres', 'SELECT count(*), sum(id) FROM docs'),
	$primary->safe_psql('postgres', 'SELECT count(*), sum(id) FROM docs'),
	'the standby has the rows of the primary');

my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($primary, 'under_load');
$restored->start;
my $restored_answers = $restored->safe_psql('postgres', $lookups);
like($restored_answers, qr/\d+,\d+/, 'the backup restored with its rows');
is($restored->safe_psql('postgres', $by_scan), $restored_answers,
	'the indexes of a backup taken under load answer as a scan does');
$restored->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(900001, 900100) i;
	VACUUM docs;});
is($restored->safe_psql('postgres', $lookups), $restored->safe_psql('postgres', $by_scan),
	'and they take new rows and vacuum');
$restored->stop;

# A crash under load, in the middle of a large insert: an immediate stop,
# no checkpoint
my $bg = $primary->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, q{
	\echo started
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(4001, 400000) i;
});
$load = start_load($primary, '-T', '600');
my $before = $primary->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id > 800000');
$primary->poll_query_until('postgres',
	"SELECT count(*) > $before + 50 FROM docs WHERE id > 800000")
	or die 'the load made no progress';
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(500001, 500500) i;});
$primary->stop('immediate');
$bg->{run}->kill_kill;
$load->{handle}->kill_kill;
$primary->start;

my $after = $primary->safe_psql('postgres', $lookups);
like($after, qr/\d+,\d+/, 'after recovery the lookups still find near-duplicates');
is($primary->safe_psql('postgres', $by_scan), $after,
	'after crash recovery the indexes answer as a scan does');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id BETWEEN 500001 AND 500500'), '500',
	'the committed rows survived the crash');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id BETWEEN 4001 AND 400000'), '0',
	'and the interrupted insert left nothing');
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(600001, 600100) i;
	VACUUM docs;});
is($primary->safe_psql('postgres', $lookups), $primary->safe_psql('postgres', $by_scan),
	'and the recovered indexes take new rows and vacuum');

# the standby follows the restarted primary and agrees with it again
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $lookups), $primary->safe_psql('postgres', $lookups),
	'after the crash the standby answers every index lookup as the primary does');

$standby->stop;
$primary->stop;
done_testing();
