# A 100 MB document: sketching and exact Jaccard work, memory stays
# proportional to the document, and every long loop honours query cancel.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('large');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION ndd');

# 3.1 million distinct 32-character words: about 100 MB, 3.1 million shingles
$node->safe_psql('postgres',
	q{CREATE TABLE big AS
	  SELECT string_agg(md5(g::text), ' ') AS doc FROM generate_series(1, 3100000) g});
my $bytes = $node->safe_psql('postgres', 'SELECT octet_length(doc) FROM big');
cmp_ok($bytes, '>=', 99_000_000, "the document has $bytes bytes");
my $mb = $bytes / (1024 * 1024);

my $s = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# peak resident memory of the backend, in MB
sub peak_mb
{
	open my $fh, '<', "/proc/$pid/status" or die "cannot read /proc/$pid/status: $!";
	while (<$fh>)
	{
		return $1 / 1024 if /^VmHWM:\s+(\d+) kB/;
	}
	die "no VmHWM in /proc/$pid/status";
}

# Peak memory growth of one query; the whole document must be held once
# (detoasted) plus the compressed copy being read.
sub check_memory
{
	my ($query, $expect, $limit_factor, $what) = @_;

	# writing 5 to clear_refs resets the peak to the current size
	open my $fh, '>', "/proc/$pid/clear_refs" or die "cannot reset the peak: $!";
	print $fh "5\n";
	close $fh;
	my $before = peak_mb();
	my $t0 = time;
	my $out = $s->query_safe($query);
	my $secs = time - $t0;
	my $grown = peak_mb() - $before;
	is($out, $expect, "$what works");
	cmp_ok($grown, '<', $limit_factor * $mb,
		sprintf("%s: peak memory grew %.0f MB for a %.0f MB document (limit %.1fx)",
			$what, $grown, $mb, $limit_factor));
	note sprintf("%s took %.2f s uncancelled", $what, $secs);
	return $secs;
}

check_memory('SELECT minhash_settings(minhash_sketch(doc)) FROM big',
	'(128,word,5,0)', 2.5, 'minhash_sketch');
check_memory("SELECT minhash_settings(minhash_sketch(doc, unit => 'char', strip_html => true)) FROM big",
	'(128,char,5,0)', 3.5, 'minhash_sketch in char mode with HTML stripping');
check_memory('SELECT simhash(doc) IS NOT NULL FROM big', 't', 2.5, 'simhash');
check_memory('SELECT jaccard(doc, doc) FROM big', '1', 4.0, 'jaccard');
check_memory('SELECT minhash_settings(minhash_sketch(doc, num_perm => 1024)) FROM big',
	'(1024,word,5,0)', 2.5, 'minhash_sketch with the largest num_perm');
check_memory('SELECT cardinality(show_shingles(doc)) FROM big', '3099996', 12.0, 'show_shingles (5 words a shingle: the answer is 5x the document)');

# A million features or elements, in any order
check_memory('SELECT simhash(array_agg(i)) = simhash(array_agg(i ORDER BY -i)) FROM generate_series(1, 1000000) i',
	't', 2.5, 'simhash of a million features');
check_memory(q{SELECT similarity(minhash_sketch(array_agg(i::text), num_perm => 1024),
	                             minhash_sketch(array_agg(i::text ORDER BY -i), num_perm => 1024))
	FROM generate_series(1, 1000000) i}, '1', 2.5, 'minhash_sketch of a million elements');

# One giant token: memory follows the document, not the token's length
$node->safe_psql('postgres', q{CREATE TABLE giant AS SELECT repeat('a', 100000000) AS doc});
check_memory('SELECT minhash_settings(minhash_sketch(doc)) FROM giant', '(128,word,5,0)', 2.5,
	'minhash_sketch of one giant token');
check_memory(q{SELECT cardinality(show_shingles(doc, unit => 'char', shingle_size => 3)) FROM giant}, '1', 2.5,
	'show_shingles of one giant token in characters');

# show_shingles of shingles that would not fit an array: a clean 54000 as
# soon as they exceed 1 GB, not an allocation failure or the OOM killer
{
	open my $fh, '>', "/proc/$pid/clear_refs" or die "cannot reset the peak: $!";
	print $fh "5\n";
	close $fh;
	my $before = peak_mb();
	$s->{stderr} = '';
	$s->query('\set VERBOSITY verbose');
	$s->query('SELECT cardinality(show_shingles(doc, shingle_size => 30)) FROM big');
	my $error = $s->{stderr};
	$s->{stderr} = '';
	$s->query_safe('\set VERBOSITY default');
	like($error, qr/ERROR:  54000: the distinct shingles of the document exceed the maximum array size/,
		'show_shingles beyond the array limit fails with 54000');
	my $grown = peak_mb() - $before;
	cmp_ok($grown, '<', 1600, sprintf('and its memory grew %.0f MB, about the 1 GB limit', $grown));
}

# Cancel: with a 200 ms statement timeout every query stops within a second
# of it (detoasting the document, which cannot be interrupted, included).
# Each query goes over the document 100 times, so that no machine is fast
# enough to finish it before the timeout.
$s->query_safe("SET statement_timeout = '200ms'");
for my $query (
	'SELECT minhash_sketch(doc) FROM big, generate_series(1, 100)',
	"SELECT minhash_sketch(doc, unit => 'char') FROM big, generate_series(1, 100)",
	'SELECT minhash_sketch(doc, strip_html => true) FROM big, generate_series(1, 100)',
	'SELECT simhash(doc) FROM big, generate_series(1, 100)',
	'SELECT jaccard(doc, doc) FROM big, generate_series(1, 100)',
	'SELECT cardinality(show_shingles(doc)) FROM big, generate_series(1, 100)',
	q{SELECT minhash_sketch(string_to_array(doc, ' ')) FROM big, generate_series(1, 100)})
{
	$s->{stderr} = '';
	my $t0 = time;
	$s->query($query);
	my $secs = time - $t0;
	like($s->{stderr}, qr/canceling statement due to statement timeout/,
		"$query is cancelled");
	cmp_ok($secs, '<', 0.2 + 1.0,
		sprintf("%s stops %.2f s after it starts", $query, $secs));
}
$s->{stderr} = '';
$s->query_safe('RESET statement_timeout');

# A containment_ops build over the document stops within a second wherever
# the timeout falls: in the extraction of its keys (shingles, then 3.1
# million keys sorted and deduplicated), in GIN's accumulation of the row's
# 2.7 million distinct keys (a tree GIN builds looking at no interrupt but
# the one in containment_ops' compare function: about the first quarter of
# the build, seconds), or in their insertion into the index.
{
	my $build = 'CREATE INDEX big_c ON big USING gin (doc containment_ops)';
	my $t0 = time;
	$s->query_safe($build);
	my $secs = time - $t0;
	$s->query_safe('DROP INDEX big_c');
	note sprintf('the containment_ops build took %.2f s uncancelled', $secs);
	for my $share (0.15, 0.25, 0.35, 0.55, 0.7)
	{
		my $timeout = $share * $secs;
		$s->query_safe(sprintf(q{SET statement_timeout = '%dms'}, $timeout * 1000));
		$s->{stderr} = '';
		$t0 = time;
		$s->query($build);
		my $elapsed = time - $t0;
		my $error = $s->{stderr};
		$s->{stderr} = '';
		$s->query_safe('RESET statement_timeout');
		like($error, qr/canceling statement due to statement timeout/,
			sprintf('the containment_ops build is cancelled at %.0f%%', 100 * $share));
		cmp_ok($elapsed, '<', $timeout + 1.0,
			sprintf('and stops %.2f s after the timeout', $elapsed - $timeout));
	}
}
$s->quit;

$node->stop;
done_testing();
