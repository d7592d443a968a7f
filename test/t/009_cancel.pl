# Every long path of ndd honours query cancel: discovery (with and without
# verification, minhash and simhash), clusters, simhash_batch and the builds
# of every index ndd offers stop with 57014 within a second of a statement
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
	[ 'docs', 'minhash discovery with verification',
	  q{SELECT count(*) FROM near_duplicate_pairs('docs', 'mh', 'id', 0.5, verify_column => 'body')} ],
	[ 'docs', 'clusters',
	  q{SELECT count(*) FROM near_duplicate_clusters('docs', 'mh', 'id', 0.5)} ],
	[ 'docs', 'a minhash_ops GIN build',
	  'CREATE INDEX docs_mh ON docs USING gin (mh minhash_ops(threshold = 0.5))', 'DROP INDEX docs_mh' ],
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
	cmp_ok($elapsed, '<', $timeout + 1.0,
		sprintf('%s stops %.2f s after it starts (%.2f s uncancelled)', $what, $elapsed, $secs));
}

# nothing was left behind by the cancelled statements
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_class WHERE relname IN ('docs_mh', 'fps_gin', 'fps_gist', 'fps_knn')}),
	'0', 'no cancelled index build left an index');
$s->quit;
$node->stop;
done_testing();
