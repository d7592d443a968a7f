# Every long path of ndd honours query cancel: discovery (with and without
# verification, minhash and simhash), clusters, simhash_batch, the builds
# of every index ndd offers and a containment search with a passage of
# millions of shingles stop with 57014 within a second of a statement
# timeout.
#
# No machine may be fast enough to finish before the timeout: each path's
# table grows (doubling) until the path, run uncancelled, takes at least ten
# times the timeout; only then is it run under the timeout.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $timeout = 0.1;    # seconds
my $long_enough = 10 * $timeout;

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ndd;
	-- pairs of rows (2i, 2i+1) are near-duplicates, other rows unrelated
	CREATE FUNCTION doc(i bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
		SELECT string_agg('w' || ((i / 2) * 64 + g), ' ') || ' x' || (i % 2)
		FROM generate_series(1, 40) g $$;
	CREATE TABLE docs (id bigint PRIMARY KEY, body text, mh minhash);
	CREATE TABLE fps (id bigint PRIMARY KEY, fp simhash);});

# add_rows(TABLE, FIRST, LAST)
my %add = (
	docs => 'INSERT INTO docs SELECT i, doc(i), minhash_sketch(doc(i)) FROM generate_series(%d, %d) i',
	fps => 'INSERT INTO fps SELECT i, simhash(ARRAY[i]) FROM generate_series(%d, %d) i');
my %rows = (docs => 0, fps => 0);


# $query on session $s under statement_timeout $timeout: it fails 57014 and
# stops within $slack seconds of the timeout ($secs: its time uncancelled)
sub cancelled_within
{
	my ($s, $query, $timeout, $slack, $what, $secs) = @_;
	$s->query_safe(sprintf(q{SET statement_timeout = '%dms'}, $timeout * 1000));
	$s->{stderr} = '';
	my $t0 = time;
	$s->query($query);
	my $elapsed = time - $t0;
	my $error = $s->{stderr};
	$s->{stderr} = '';
	$s->query_safe('RESET statement_timeout');
	like($error, qr/ERROR:  57014: canceling statement due to statement timeout/,
		"$what is cancelled (57014)");
	cmp_ok($elapsed, '<', $timeout + $slack,
		sprintf('%s stops %.2f s after it starts (%.2f s uncancelled)', $what, $elapsed, $secs));
}

sub grow
{
	my ($table, $to) = @_;
	$node->safe_psql('postgres', sprintf($add{$table}, $rows{$table} + 1, $to));
	$node->safe_psql('postgres', "ANALYZE $table");
	$rows{$table} = $to;
}
grow('docs', 10_000);
grow('fps', 100_000);

my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');

# run QUERY (then UNDO, if given) and return the seconds QUERY took
sub uncancelled
{
	my ($query, $undo) = @_;
	my $t0 = time;
	$s->query_safe($query);
	my $secs = time - $t0;
	$s->query_safe($undo) if defined $undo;
	return $secs;
}

for my $path (
	[ 'docs', 'minhash discovery',
	  q{SELECT count(*) FROM near_duplicate_pairs('docs', 'mh', 'id', 0.5)} ],
	[ 'docs', 'minhash discovery on parallel workers',
	  q{SET max_parallel_workers_per_gather = 2; SET min_parallel_table_scan_size = 0; SELECT count(*) FROM near_duplicate_pairs('docs', 'mh', 'id', 0.5)},
	  'RESET max_parallel_workers_per_gather; RESET min_parallel_table_scan_size' ],
	[ 'docs', 'minhash discovery on the SQL path',
	  q{SET ndd.discovery_path = sql; SELECT count(*) FROM near_duplicate_pairs('docs', 'mh', 'id', 0.5)},
	  'RESET ndd.discovery_path' ],
	[ 'docs', 'minhash discovery with verification',
	  q{SELECT count(*) FROM near_duplicate_pairs('docs', 'mh', 'id', 0.5, verify_column => 'body')} ],
	[ 'docs', 'clusters',
	  q{SELECT count(*) FROM near_duplicate_clusters('docs', 'mh', 'id', 0.5)} ],
	[ 'docs', 'a minhash_ops GIN build',
	  'CREATE INDEX docs_mh ON docs USING gin (mh minhash_ops(threshold = 0.5))', 'DROP INDEX docs_mh' ],
	[ 'docs', 'a containment_ops GIN build',
	  'CREATE INDEX docs_body ON docs USING gin (body containment_ops)', 'DROP INDEX docs_body' ],
	[ 'fps', 'simhash discovery',
	  q{SELECT count(*) FROM near_duplicate_pairs('fps', 'fp', 'id', max_distance => 6)} ],
	# (its queries outgrow work_mem: the NOTICE saying so would fail query_safe)
	[ 'fps', 'simhash_batch',
	  q{SET client_min_messages = warning; SELECT count(*) FROM simhash_batch('fps', 'fps', 6)},
	  'RESET client_min_messages' ],
	[ 'fps', 'a simhash_ops GIN build',
	  'CREATE INDEX fps_gin ON fps USING gin (fp simhash_ops)', 'DROP INDEX fps_gin' ],
	[ 'fps', 'a simhash_ops GiST build',
	  'CREATE INDEX fps_gist ON fps USING gist (fp simhash_ops)', 'DROP INDEX fps_gist' ],
	[ 'fps', 'a simhash_knn_ops GiST build',
	  'CREATE INDEX fps_knn ON fps USING gist (fp simhash_knn_ops)', 'DROP INDEX fps_knn' ])
{
	my ($table, $what, $query, $undo) = @$path;

	my $secs = uncancelled($query, $undo);
	while ($secs < $long_enough)
	{
		grow($table, 2 * $rows{$table});
		$secs = uncancelled($query, $undo);
	}
	note sprintf('%s takes %.2f s on %d rows uncancelled', $what, $secs, $rows{$table});

	cancelled_within($s, $query, $timeout, 1.0, $what, $secs);
	# (a statement's SETs went with it) the discovery engine's files, shared or not, go with the statement
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_ls_tmpdir()'), '0',
		"$what leaves no temporary file behind");
}

# A containment search with a passage of a million shingles or more, with
# rows in the index's pending list and without.  GIN matches every pending
# row against every key of the query holding the page's lock, where no
# cancel is seen, and before reading the index calls triConsistent once per
# key, each call counting all of them; a query sends at most 2,048 keys, so
# that both stay short.  The stored query (tens of megabytes) is read twice:
# by PostgreSQL, which detoasts an index scan's key whole before
# extractQuery sees it, and by the recheck, which fetches it in slices
# between which cancel is seen; decompressing it is one call each time
# (about 0.15 s for 35 MB on a loaded machine).  So the search stops within
# a second of the timeout, and uncancelled takes seconds a million
# shingles, where all the keys took minutes, cancelled or not.  At a
# threshold of 1 - 1,000 / shingles a row must match 1,048 of the keys sent;
# at 0.5 none (every row is a candidate, and the recheck, which shingles the
# passage once, decides).  The queries are stored, as a long passage is: a
# row compares the query's TOAST pointer, not its megabytes.
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgstattuple;
	CREATE TABLE cdocs (id bigint PRIMARY KEY, body text) WITH (autovacuum_enabled = off);
	INSERT INTO cdocs SELECT i, doc(i) FROM generate_series(1, 2000) i;
	CREATE INDEX cdocs_body ON cdocs USING gin (body containment_ops) WITH (fastupdate = on);
	INSERT INTO cdocs SELECT i, doc(i) FROM generate_series(2001, 2500) i;
	ANALYZE cdocs;});

my $shingles;
sub passage
{
	$shingles = defined $_[0] ? $_[0] : 2 * $shingles;
	$node->safe_psql('postgres', sprintf(q{
		DROP TABLE IF EXISTS cquery;
		CREATE TABLE cquery AS
		SELECT ask, containment_query(p.passage, t) AS q
		FROM (SELECT string_agg('p' || i, ' ') AS passage FROM generate_series(1, %d) i) p,
		     (VALUES ('some keys', 1 - 1000.0 / %d), ('every row', 0.5)) v(ask, t)},
		$shingles + 4, $shingles));
}
# (a session of its own: a session's queries share one timer; jit off, as
# enable_seqscan = off prices the plan past jit_above_cost, and compiling
# it, PostgreSQL's work and not ndd's, looks at no interrupt for 0.3 s)
$s->quit;
$s = $node->background_psql('postgres', on_error_stop => 0);
$s->query_safe('\set VERBOSITY verbose');
$s->query_safe('SET enable_seqscan = off');
$s->query_safe('SET jit = off');
for my $case ([ 'pending', 'some keys' ], [ 'pending', 'every row' ],
	[ 'no pending', 'some keys' ], [ 'no pending', 'every row' ])
{
	my ($pending, $ask) = @$case;
	my $what = "a containment search asking $ask, $pending list";
	my $query = "SELECT count(*) FROM cdocs WHERE body @> (SELECT q FROM cquery WHERE ask = '$ask')";

	# a million shingles, more only where the search is faster than a second
	passage(1_000_000);
	$node->safe_psql('postgres', 'VACUUM cdocs') if $pending eq 'no pending';
	is($node->safe_psql('postgres', q{SELECT pending_tuples > 0 FROM pgstatginindex('cdocs_body')}),
		$pending eq 'pending' ? 't' : 'f', "$what: the pending list as said");
	my $secs = uncancelled($query);
	while ($secs < $long_enough)
	{
		passage();
		$secs = uncancelled($query);
	}
	cmp_ok($secs / ($shingles / 1e6), '<', 30,
		sprintf('%s takes %.2f s uncancelled for %d shingles (under 30 s a million)', $what, $secs, $shingles));

	cancelled_within($s, $query, $timeout, 1.0, $what, $secs);
}
$s->query_safe('RESET enable_seqscan');
$s->query_safe('RESET jit');

# nothing was left behind by the cancelled statements
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_class WHERE relname IN ('docs_mh', 'docs_body', 'fps_gin', 'fps_gist', 'fps_knn')}),
	'0', 'no cancelled index build left an index');
$s->quit;
$node->stop;
done_testing();
