# ndd's indexes are crash- and replica-safe: they write their changes through
# PostgreSQL's GIN and GiST access methods, so after inserts, updates and
# deletes from concurrent clients a streaming standby answers every index
# query exactly as the primary does, a pg_basebackup taken under that load
# restores to indexes that agree with a scan, and after a crash (an immediate
# stop under load) recovery leaves indexes that return the same rows as a
# sequential scan.  amcheck agrees: bt_index_check finds nothing wrong in the
# primary key, and gin_index_check (amcheck 1.5, PostgreSQL 18) nothing in
# any GIN index of minhash_ops or simhash_ops, after the load, on the
# standby, in the restored backup, after crash recovery and after a bulk load
# that sits in the pending lists (and again once they are flushed).
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

# amcheck, created on the primary before any backup, so the standby and the
# restored backup have it too.  gin_index_check is looked for by name: majors
# whose amcheck lacks it (15, 17) run every other assertion and say, with a
# note, which indexes went unchecked.
my $has_amcheck = $primary->safe_psql('postgres',
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'") eq '1';
$primary->safe_psql('postgres', 'CREATE EXTENSION amcheck') if $has_amcheck;
my $has_gin_check = $has_amcheck && $primary->safe_psql('postgres',
	"SELECT to_regprocedure('gin_index_check(regclass)') IS NOT NULL") eq 't';
note $has_amcheck ? 'amcheck ' . $primary->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'amcheck'") : 'amcheck is not installed';
note 'this amcheck has no gin_index_check: the GIN indexes are not checked by it'
	unless $has_gin_check;

# every GIN index of minhash_ops or simhash_ops, by the catalog
my $gin_indexes_sql = q{
	SELECT string_agg(c.relname, ' ' ORDER BY c.relname)
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
	WHERE am.amname = 'gin' AND EXISTS (
		SELECT FROM pg_opclass oc
		WHERE oc.oid = ANY (i.indclass) AND oc.opcmethod = am.oid
		AND oc.opcname IN ('minhash_ops', 'simhash_ops'))};
is($primary->safe_psql('postgres', $gin_indexes_sql), 'docs_fp docs_mh docs_mh_pending',
	'the GIN indexes of minhash_ops and simhash_ops that amcheck is to check');

# check_indexes(NODE, WHEN): bt_index_check (with heapallindexed) of the
# primary key, gin_index_check of every GIN index of minhash_ops or
# simhash_ops; one assertion per index
sub check_indexes
{
	my ($node, $when) = @_;
	my $name = $node->name;
	if (!$has_amcheck)
	{
		note "$when: amcheck is not installed, no index of $name checked";
		return;
	}
	my ($ret, $out, $err) = $node->psql('postgres', q{SELECT bt_index_check('docs_pkey', true)});
	is($ret, 0, "$when: bt_index_check finds nothing wrong in docs_pkey on $name")
		or diag $err;
	my @gin = split ' ', $node->safe_psql('postgres', $gin_indexes_sql);
	if (!$has_gin_check)
	{
		note "$when: no gin_index_check in this amcheck, @gin on $name not checked";
		return;
	}
	for my $index (@gin)
	{
		($ret, $out, $err) = $node->psql('postgres', "SELECT gin_index_check('$index')");
		is($ret, 0, "$when: gin_index_check finds nothing wrong in $index on $name")
			or diag $err;
	}
}

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
check_indexes($primary, 'after the concurrent load');
check_indexes($standby, 'after the concurrent load');

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
check_indexes($restored, 'restored from a backup taken under load');
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
check_indexes($restored, 'restored, after new rows and vacuum');
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
check_indexes($primary, 'after crash recovery');

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

# A bulk load that stays in the pending lists of the GIN indexes with
# fastupdate on (docs_mh_pending, docs_fp): their limit is raised above the
# load, and autovacuum is off for the table (from here to the end, so that
# no vacuum runs beside the checks either), so nothing flushes them until
# gin_clean_pending_list does.  A third of its rows are new documents (those
# up to 4000 near-duplicates of rows 1 to 4000, which the lookups find in the
# lists), the rest 10,000 copies each of two documents, whose keys get
# posting trees when the lists are flushed (and in docs_mh, which has no
# pending list, as the rows come).  pgstatginindex (pgstattuple) shows the
# lists at each check, gin_page_opaque_info (pageinspect) the posting trees.
$primary->safe_psql('postgres', 'CREATE EXTENSION pgstattuple; CREATE EXTENSION pageinspect');
my $pending_sql = q{
	SELECT string_agg(c || ':' || (pending_pages > 0)::text, ' ' ORDER BY c)
	FROM unnest(ARRAY['docs_fp', 'docs_mh_pending']) c, pgstatginindex(c::regclass)};
$primary->safe_psql('postgres', q{
	ALTER TABLE docs SET (autovacuum_enabled = off);
	ALTER INDEX docs_mh_pending SET (gin_pending_list_limit = 1048576);
	ALTER INDEX docs_fp SET (gin_pending_list_limit = 1048576);});
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT 1000000 + i, minhash_sketch(doc(d), shingle_size => 1), simhash(doc(d))
	FROM generate_series(1, 30000) i, LATERAL (SELECT CASE i % 3 WHEN 0 THEN i ELSE 1 + 5 * (i % 3) END) c(d);});
is($primary->safe_psql('postgres', $pending_sql), 'docs_fp:true docs_mh_pending:true',
	'after the bulk load the pending lists hold rows');
my $pending_answers = $primary->safe_psql('postgres', $lookups);
is($primary->safe_psql('postgres', $by_scan), $pending_answers,
	'with the pending lists in use the indexes answer as a scan does');
check_indexes($primary, 'with the pending lists in use');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $pending_sql), 'docs_fp:true docs_mh_pending:true',
	'the standby has the pending lists too');
is($standby->safe_psql('postgres', $lookups), $pending_answers,
	'and answers every index lookup as the primary does');
check_indexes($standby, 'with the pending lists in use');

$primary->safe_psql('postgres', q{
	SELECT gin_clean_pending_list('docs_mh_pending'), gin_clean_pending_list('docs_fp');
	ALTER INDEX docs_mh_pending RESET (gin_pending_list_limit);
	ALTER INDEX docs_fp RESET (gin_pending_list_limit);});
is($primary->safe_psql('postgres', $pending_sql), 'docs_fp:false docs_mh_pending:false',
	'gin_clean_pending_list flushed the pending lists');
is($primary->safe_psql('postgres', q{
	SELECT string_agg(c || ':' || (SELECT count(*) > 0
		FROM generate_series(1, pg_relation_size(c) / current_setting('block_size')::int - 1) b,
			gin_page_opaque_info(get_raw_page(c, b::int)) o
		WHERE 'data' = ANY (o.flags) AND NOT 'leaf' = ANY (o.flags) AND NOT 'deleted' = ANY (o.flags))::text,
		' ' ORDER BY c)
	FROM unnest(ARRAY['docs_fp', 'docs_mh', 'docs_mh_pending']) c}),
	'docs_fp:true docs_mh:true docs_mh_pending:true',
	'every GIN index has posting trees of more than one page for the checks to walk');
is($primary->safe_psql('postgres', $lookups), $pending_answers,
	'and the indexes answer as before');
check_indexes($primary, 'after the pending lists were flushed');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $pending_sql), 'docs_fp:false docs_mh_pending:false',
	'the standby has them flushed too');
check_indexes($standby, 'after the pending lists were flushed');

# the standby follows the restarted primary and agrees with it again
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $lookups), $primary->safe_psql('postgres', $lookups),
	'after the crash the standby answers every index lookup as the primary does');
check_indexes($standby, 'after the crash');

$standby->stop;
$primary->stop;
done_testing();
