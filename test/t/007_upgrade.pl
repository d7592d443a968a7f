# ALTER EXTENSION ndd UPDATE from every released version: the catalog it
# leaves equals a fresh install of the current version (every member object,
# its definition, comment and privileges, as pg_dump --binary-upgrade writes
# them out), and data written under 0.1 (sketches, indexes, a guarded table)
# answers the same queries afterwards.
#
# make install ships the current install script and the upgrade steps only:
# the install scripts of released versions, as they shipped, are this test's
# fixtures (test/upgrade).  The test runs the installation from a copy of its
# own (the binaries copied, share/ and lib/ linked), so that it can add them
# to the extension directory without writing to the installation: each old
# version is created with its fixture there, then the fixtures go, and every
# update runs with what make install installed, as for a user who upgraded
# the package after creating the extension.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = abs_path(dirname(__FILE__) . '/../..');

# the released versions: one fixture each, named as it shipped
my %released;
for my $fixture (glob "$top/test/upgrade/ndd--*.sql")
{
	$fixture =~ m{/ndd--([^-]+)\.sql\z} or die "$fixture: not an install script's name";
	$released{$1} = $fixture;
}
die "no fixture in $top/test/upgrade" unless %released;

# sql/ holds the current install script and the upgrade steps only, and
# each step starts from a released version, so that no version a user may
# have installed goes untested
my ($current) = slurp_file("$top/ndd.control") =~ /^default_version = '([^']+)'/m;
for my $file (sort glob "$top/sql/*")
{
	(my $name = $file) =~ s{.*/}{};
	next if $name eq 'ndd.sql' || $name eq "ndd--$current.sql";    # and the build's copy
	my ($from) = $name =~ /\Andd--([^-]+)--[^-]+\.sql\z/;
	ok(defined $from && $released{$from},
		"sql/$name is an upgrade step from a released version, whose install script is in test/upgrade");
}

# A copy of the installation in $root (the same absolute paths under it):
# bin/ copied, as PostgreSQL finds share/ and lib/ relative to the real path
# of its binaries; lib/ linked; share/ linked entry by entry, with an
# extension directory of its own holding links to the installed files (but
# any released install script an older make install left there).
sub copy_installation
{
	my ($root) = @_;
	my %dir;
	for my $which (qw(bindir sharedir pkglibdir))
	{
		chomp($dir{$which} = `pg_config --$which`);
		die "pg_config --$which failed" if $? != 0;
	}
	make_path("$root$dir{bindir}", dirname("$root$dir{pkglibdir}"), "$root$dir{sharedir}/extension");
	system_or_bail('cp', '-RP', "$dir{bindir}/.", "$root$dir{bindir}");
	symlink($dir{pkglibdir}, "$root$dir{pkglibdir}") or die "symlink: $!";
	for my $entry (glob "$dir{sharedir}/*")
	{
		next if $entry eq "$dir{sharedir}/extension";
		symlink($entry, "$root$entry") or die "symlink $entry: $!";
	}
	for my $file (glob "$dir{sharedir}/extension/*")
	{
		next if $file =~ m{/ndd--([^-]+)\.sql\z} && $released{$1};
		symlink($file, "$root$file") or die "symlink $file: $!";
	}
	return ("$root$dir{bindir}", "$root$dir{sharedir}/extension");
}

my ($bindir, $extdir) = copy_installation(PostgreSQL::Test::Utils::tempdir);
$ENV{PATH} = "$bindir:$ENV{PATH}";

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;
is($node->safe_psql('postgres', q{SELECT setting FROM pg_config() WHERE name = 'SHAREDIR'}) . '/extension',
	abs_path($extdir), 'the server reads the copy\'s extension directory');
is($node->safe_psql('postgres', q{SELECT default_version FROM pg_available_extensions WHERE name = 'ndd'}),
	$current, "the installation's ndd is $current, as ndd.control says");

sub available
{
	return $node->safe_psql('postgres',
		q{SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'ndd'});
}
copy($released{$_}, "$extdir/ndd--$_.sql") or die "copy $released{$_}: $!" for keys %released;
my @versions = sort keys %released;
is(available(), join(' ', sort(@versions, $current)), 'with the fixtures, every released version can be created');
note "released: @versions; current: $current";

# the extension's objects as pg_dump writes them, without what differs by
# chance: the OIDs and frozen xids that binary-upgrade mode pins, and the
# random key of \restrict
sub catalog
{
	my ($db) = @_;
	my $dump = `pg_dump -h '${\$node->host}' -p ${\$node->port} --schema-only --binary-upgrade '$db'`;
	die "pg_dump $db failed" if $? != 0;
	return join "\n", grep { !/binary_upgrade|For binary upgrade|^-- Dumped|^\\(un)?restrict |relfrozenxid|^$/ } split /\n/, $dump;
}

# Each released version installed fresh, beside a fresh install of the
# current one; and data written under 0.1, with the answers it gives there.
for my $from (@versions)
{
	(my $tag = $from) =~ s/\W/_/g;
	$node->safe_psql('postgres', "CREATE DATABASE fresh_$tag; CREATE DATABASE walked_$tag");
	$node->safe_psql("fresh_$tag", 'CREATE EXTENSION ndd');
	$node->safe_psql("walked_$tag", "CREATE EXTENSION ndd VERSION '$from'");
}

$node->safe_psql('postgres', 'CREATE DATABASE data');
$node->safe_psql('data', q{
	CREATE EXTENSION ndd VERSION '0.1';
	CREATE FUNCTION doc(family int, member int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
		SELECT (SELECT string_agg('f' || family || 'w' || g, ' ') FROM generate_series(1, 60) g)
		    || CASE WHEN member > 1 THEN ' extra' || member ELSE '' END $$;
	CREATE TABLE docs (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
	INSERT INTO docs
	SELECT f * 10 + m, doc(f, m), minhash_sketch(doc(f, m)), simhash(doc(f, m))
	FROM generate_series(1, 30) f, generate_series(1, 5) m;
	CREATE INDEX docs_sketch ON docs USING gin (sketch minhash_ops);
	CREATE INDEX docs_fp ON docs USING gin (fp simhash_ops);
	CREATE INDEX docs_fp_gist ON docs USING gist (fp simhash_ops);
	CREATE TABLE guarded (id bigint PRIMARY KEY, sketch minhash);
	CREATE INDEX ON guarded USING gin (sketch minhash_ops) WITH (fastupdate = off);
	CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
	INSERT INTO guarded VALUES (1, minhash_sketch(doc(1, 1)));});
my $queries = q{
	SET enable_seqscan = off;
	SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE d.sketch % minhash_sketch(doc(7, 1));
	SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE similar(d.sketch, minhash_sketch(doc(7, 1)), 0.9);
	SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE d.fp % simhash(doc(8, 3));
	SELECT array_agg(s.id) FROM (SELECT d.id FROM docs d ORDER BY d.fp <-> simhash(doc(8, 3)), d.id LIMIT 4) s;
	RESET enable_seqscan;
	SELECT count(*), sum(p.id_a * p.id_b) FROM near_duplicate_pairs('docs', 'sketch', 'id') p;
	SELECT count(*), sum(p.id_a * p.id_b) FROM near_duplicate_pairs('docs', 'fp', 'id', max_distance => 4) p;
	SELECT count(DISTINCT c.cluster_id) FROM near_duplicate_clusters('docs', 'sketch', 'id') c;
	SELECT md5(string_agg(d.sketch::text || d.fp::text, ',' ORDER BY d.id)) FROM docs d;
};
my $before = $node->safe_psql('data', $queries);

# The fixtures go: from here on the extension directory holds what make
# install installed, and each update reads nothing else.
unlink("$extdir/ndd--$_.sql") or die "unlink: $!" for @versions;
is(available(), $current, 'without the fixtures only the current version can be created: the steps create none');

for my $from (@versions)
{
	(my $tag = $from) =~ s/\W/_/g;
	$node->safe_psql("walked_$tag", 'ALTER EXTENSION ndd UPDATE');
	is($node->safe_psql("walked_$tag", q{SELECT extversion FROM pg_extension WHERE extname = 'ndd'}),
		$current, "$from updates to $current");
	my ($fresh, $walked) = (catalog("fresh_$tag"), catalog("walked_$tag"));
	like($fresh, qr/CREATE FUNCTION public\.near_duplicate_pairs/, 'the dump holds the extension\'s members');
	is($walked, $fresh, "a $from install updated to $current has the catalog of a fresh $current install");
	if ($walked ne $fresh)
	{
		my $dir = PostgreSQL::Test::Utils::tempdir;
		open my $a, '>', "$dir/fresh.sql";
		print $a $fresh;
		close $a;
		open my $b, '>', "$dir/walked.sql";
		print $b $walked;
		close $b;
		diag(`diff -u $dir/fresh.sql $dir/walked.sql | head -80`);
	}
}

# Data written under 0.1 answers the same queries under the current version.
$node->safe_psql('data', 'ALTER EXTENSION ndd UPDATE');
my $after = $node->safe_psql('data', $queries);
is($after, $before, 'sketches, indexes and discovery written under 0.1 answer the same after the update');
like($before, qr/\{71,72,73,74,75\}/, 'and those answers find the planted near-duplicates');
is($node->safe_psql('data', q{SELECT minhash_sketch(doc(3, 2))::text = (SELECT sketch::text FROM docs WHERE id = 32)}),
	't', 'a sketch made now equals the one stored under 0.1');
my ($ret, $out, $err) = $node->psql('data', 'INSERT INTO guarded VALUES (2, minhash_sketch(doc(1, 2)))');
like($err, qr/near-duplicate of an existing row.*Key \(id\)=\(1\)/s, 'the guard set up under 0.1 still rejects');
$node->safe_psql('data', 'CREATE ROLE stranger');
($ret, $out, $err) = $node->psql('data', 'SET ROLE stranger; SELECT count(*) FROM ndd_near_duplicate_locks');
like($err, qr/permission denied/, 'and its token table is no longer open to every role');

# An upgrade step carries catalog changes only: from 0.2.0 on no step holds
# a function body, and 0.3.1, which changed what discovery does (src/features/pairs.c)
# and nothing in the catalog, has a step without a single statement.
for my $step (sort glob "$extdir/ndd--*--*.sql")
{
	next if $step =~ m{/ndd--0\.1--};    # written before the rule
	(my $name = $step) =~ s{.*/}{};
	unlike(slurp_file($step), qr/LANGUAGE\s+plpgsql|\$\$/i, "$name holds no function body");
}
my $step = slurp_file("$extdir/ndd--0.3.0--0.3.1.sql");
$step =~ s{/\*.*?\*/}{}gs;
$step =~ s/--[^\n]*//g;
$step =~ s/^\\echo[^\n]*//mg;
like($step, qr/\A\s*\z/, 'the 0.3.0 to 0.3.1 step has no statement');

$node->stop;
done_testing();
