# The manual's SQL examples run, and show what they say they show.
#
# Every ```sql block of README.md and docs/*.md (and only those: ```sh and
# ```text blocks are not run) is run by psql.  The blocks of one file run in
# order, as one script, in a fresh database of their own, so a chapter can
# build on its earlier examples; none of them starts with ndd installed, so
# each file's examples begin with CREATE EXTENSION ndd.
#
# Shown output.  The comment lines that directly follow a statement (the
# line after the one that ends it with ";", no blank line between) are that
# statement's output, written as psql prints it with its default (aligned)
# format, each line behind "-- ":
#
#     SELECT id, similarity FROM ... ;
#     --  id | similarity
#     -- ----+------------
#     --   1 |  0.7421875
#     -- (1 row)
#
# The header may be left out (then only the rows are compared), and so may
# the rule line below it and the "(N rows)" line.  Cells are compared with the
# blanks around them trimmed.  "-- (0 rows)" alone says there are none.
# Lines that start with ERROR:, DETAIL:, HINT:, NOTICE:, WARNING: or INFO:
# are the statement's messages: each shown one must come, in that order
# (messages not shown are not checked, except errors).  A statement that
# fails without a shown ERROR: fails the test, and so does one that shows
# an ERROR: and succeeds.  A comment that is not output must be separated
# from the statement above it by a blank line, or stand before the
# statement it explains.  Comments at the end of a statement's line are
# never compared.
#
# Blocks that cannot run here are marked, on the line before the fence:
#
#     <!-- not run: needs a Citus cluster -->
#
# The reason is required; the test prints how many blocks it left out, and
# why.
#
# One TAP test per block run, named by its file and line, and one per file
# for statements whose output differs.  Then completeness:
#
#   - every function of ndd appears in a block of docs/*.md that runs, except
#     the support functions that nobody calls by name: type input/output
#     (minhash_in, ...), index access method support (gin_*, gsimhash_*),
#     aggregate support (*_transfn, *_finalfn, ...), planner support and
#     selectivity estimators, operator implementations (the operators are
#     shown instead: simhash_lt is "<"), the event trigger function, and the
#     internal triggers of ndd_maintain_clusters (ndd_maintain_clusters_trigger,
#     ndd_cluster_step, ndd_claim_cluster_lock).  The catalogs say which
#     function is which, so a new function is caught;
#   - every function, exempt or not, is named in docs/reference.md, and every
#     one called by name with its signature as \df shows it (argument names
#     and defaults, from pg_get_function_arguments);
#   - every setting ndd.* appears in a block of docs/*.md that runs.
# The functions are those of the installed ndd, and those sql/ndd.sql
# comments on (COMMENT ON FUNCTION / AGGREGATE), should the two differ.
#
# The expected outputs must read the same on PostgreSQL 15, 17 and 18: show
# no EXPLAIN output, no version and nothing that depends on timing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my $top = abs_path(dirname(__FILE__) . '/../..');
my @files = ('README.md', map { s{^\Q$top\E/}{}r } sort glob("$top/docs/*.md"));

# The ```sql blocks of a markdown file: [line of the fence, text, skip reason]
sub sql_blocks
{
	my ($file) = @_;
	open my $fh, '<', "$top/$file" or die "cannot read $file: $!";
	my @lines = <$fh>;
	close $fh;
	my @blocks;
	my $i = 0;
	my $previous = '';
	while ($i < @lines)
	{
		my $line = $lines[$i];
		if ($line =~ /^(\s*)```+\s*(\S*)\s*$/)
		{
			my ($indent, $lang) = ($1, $2);
			my $start = $i + 1;
			my @body;
			$i++;
			while ($i < @lines && $lines[$i] !~ /^\s*```+\s*$/)
			{
				my $l = $lines[$i];
				$l =~ s/^\Q$indent\E//;
				push @body, $l;
				$i++;
			}
			die "$file:$start: unclosed code block\n" if $i >= @lines;
			if ($lang eq 'sql')
			{
				my $skip;
				if ($previous =~ /<!--\s*not run:\s*(.*?)\s*-->/)
				{
					$skip = $1;
					die "$file:$start: a block not run needs a reason\n" if $skip eq '';
				}
				push @blocks, { line => $start, text => join('', @body), skip => $skip };
			}
			$previous = '';
			$i++;
			next;
		}
		$previous = $line if $line =~ /\S/;
		$i++;
	}
	return @blocks;
}

# Split a block into statements, each with the comment lines that follow it
# directly (its shown output): [first line, sql, [output lines]]
sub statements
{
	my ($text, $first_line) = @_;
	my @lines = split /\n/, $text;
	my @stmts;
	my ($sql, $start, $quote) = ('', undef, '');
	my $n = 0;
	while ($n < @lines)
	{
		my $line = $lines[$n];
		if ($sql eq '' && $line !~ /\S/ || $sql eq '' && $line =~ /^\s*--/)
		{
			$n++;
			next;
		}
		if ($sql eq '' && $line =~ /^\s*\\/)
		{
			push @stmts, { line => $first_line + $n, sql => "$line\n", out => [] };
			$n++;
			next;
		}
		$start //= $n;
		my ($pos, $len, $ended) = (0, length $line, 0);
		while ($pos < $len)
		{
			if ($quote ne '')
			{
				my $at = index($line, $quote, $pos);
				if ($at < 0) { $pos = $len; last; }
				$pos = $at + length $quote;
				$quote = '';
				next;
			}
			my $rest = substr($line, $pos);
			last if $rest =~ /^--/;
			if ($rest =~ /^(\$[A-Za-z_]*\$)/) { $quote = $1; $pos += length $1; next; }
			my $c = substr($line, $pos, 1);
			if ($c eq "'" || $c eq '"') { $quote = $c; $pos++; next; }
			if ($c eq ';') { $ended = 1; last; }
			$pos++;
		}
		if (!$ended)
		{
			$sql .= "$line\n";
			$n++;
			next;
		}
		my $tail = substr($line, $pos + 1);
		die "line " . ($first_line + $n) . ": one statement per line, please\n" if $tail =~ /^\s*[^\s-]/;
		$sql .= substr($line, 0, $pos + 1) . "\n";
		my @out;
		$n++;
		while ($n < @lines && $lines[$n] =~ /^\s*--/)
		{
			push @out, $lines[$n] =~ s/^\s*-- ?//r;
			$n++;
		}
		push @stmts, { line => $first_line + $start, sql => $sql, out => \@out };
		($sql, $start) = ('', undef);
	}
	die "line " . ($first_line + $start) . ": statement without a closing ;\n" if $sql =~ /\S/;
	return @stmts;
}

sub cells { my ($l) = @_; return join ' | ', map { s/^\s+|\s+$//gr } split /\|/, $l, -1; }
sub is_rule { return $_[0] =~ /^\s*-+(\+-+)*\s*$/; }

# What psql printed for one statement: header, rows, footer, or other lines
sub parse_result
{
	my @lines = grep { $_ ne '' } @_;
	for my $r (1 .. $#lines)
	{
		next unless is_rule($lines[$r]);
		my @rows = @lines[ $r + 1 .. $#lines ];
		my $footer = @rows && $rows[-1] =~ /^\(\d+ rows?\)$/ ? pop @rows : undef;
		return { header => cells($lines[ $r - 1 ]), rows => [ map { cells($_) } @rows ], footer => $footer };
	}
	return { lines => [ map { s/^\s+|\s+$//gr } @lines ] };
}

my $message_re = qr/^(ERROR|WARNING|NOTICE|DETAIL|HINT|INFO|CONTEXT):\s+/;
sub squash { return $_[0] =~ s/\s+/ /gr =~ s/^\s+|\s+$//gr; }

# Compare one statement's shown output with what it printed; '' when equal
sub compare
{
	my ($stmt, $stdout, $stderr) = @_;
	my @shown = @{ $stmt->{out} };
	my @shown_msgs = map { squash($_) } grep { /$message_re/ } @shown;
	my @shown_rows = grep { !/$message_re/ } @shown;
	my @msgs = map { squash(s/^psql:[^:]*:\d+: //r) } grep { /\S/ } @$stderr;
	my @problems;

	my ($error) = grep { /^ERROR:/ } @msgs;
	my $error_shown = grep { /^ERROR:/ } @shown_msgs;
	push @problems, "it failed: $error" if $error && !$error_shown;
	push @problems, "it shows an ERROR but succeeded" if $error_shown && !$error;
	my $at = 0;
	for my $m (@shown_msgs)
	{
		$at++ while $at < @msgs && $msgs[$at] ne $m;
		if ($at >= @msgs)
		{
			push @problems, "message not printed: $m\n  printed:\n" . join('', map { "    $_\n" } @msgs);
			last;
		}
		$at++;
	}

	if (@shown_rows)
	{
		my $got = parse_result(@$stdout);
		my (@want, @have);
		if (grep { is_rule($_) } @shown_rows)
		{
			my $want = parse_result(@shown_rows);
			@want = ($want->{header}, @{ $want->{rows} });
			@have = defined $got->{header} ? ($got->{header}, @{ $got->{rows} }) : @{ $got->{lines} };
			push @want, $want->{footer} if defined $want->{footer};
			push @have, $got->{footer} if defined $want->{footer} && defined $got->{footer};
		}
		elsif (defined $got->{header})
		{
			@want = map { /^\(\d+ rows?\)$/ ? $_ : cells($_) } @shown_rows;
			@have = @{ $got->{rows} };
			# a shown header without its rule line
			unshift @have, $got->{header} if cells($shown_rows[0]) eq $got->{header};
			push @have, $got->{footer} if $want[-1] =~ /^\(\d+ rows?\)$/;
		}
		else
		{
			@want = map { s/^\s+|\s+$//gr } @shown_rows;
			@have = @{ $got->{lines} };
		}
		my ($w, $h) = (join("\n", @want), join("\n", @have));
		push @problems, "shown:\n$w\nprinted:\n$h" if $w ne $h;
	}
	return join("\n", @problems);
}

my $node = PostgreSQL::Test::Cluster->new('manual');
$node->init;
$node->start;

my (%run_text, @skipped);
my $dbn = 0;
for my $file (@files)
{
	my @blocks = sql_blocks($file);
	next unless @blocks;
	my $db = 'manual_' . ++$dbn;
	$node->safe_psql('postgres', "CREATE DATABASE $db");

	my (@stmts, $script);
	$script = '';
	for my $b (@blocks)
	{
		if (defined $b->{skip})
		{
			push @skipped, "$file:$b->{line}: $b->{skip}";
			next;
		}
		$run_text{$file} .= $b->{text};
		my @s = eval { statements($b->{text}, $b->{line} + 1) };
		if ($@)
		{
			fail("$file:$b->{line}: the block parses");
			diag($@);
			next;
		}
		for my $s (@s)
		{
			$s->{block} = $b;
			push @stmts, $s;
			my $k = $#stmts;
			$script .= "\\echo '\@\@ndd-stmt $k'\n\\warn '\@\@ndd-stmt $k'\n$s->{sql}\n";
		}
	}
	$script .= "\\echo '\@\@ndd-stmt end'\n\\warn '\@\@ndd-stmt end'\n";

	my ($stdout, $stderr) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-v', 'ON_ERROR_STOP=0', '-P', 'pager=off', '-d', $node->connstr($db), '-f', '-' ],
		'<', \$script, '>', \$stdout, '2>', \$stderr, IPC::Run::timeout(600));
	my (%out, %err);
	for ([ $stdout, \%out ], [ $stderr, \%err ])
	{
		my ($text, $into) = @$_;
		my $k;
		for my $line (split /\n/, $text)
		{
			if ($line =~ /^(?:psql:[^:]*:\d+: )?\@\@ndd-stmt (\S+)$/) { $k = $1; $into->{$k} //= []; next; }
			push @{ $into->{ $k // 'before' } }, $line;
		}
	}
	ok(defined $out{end}, "$file: psql ran every statement") or diag($stderr);

	my %problems;
	for my $k (0 .. $#stmts)
	{
		my $p = compare($stmts[$k], $out{$k} // [], $err{$k} // []);
		push @{ $problems{ $stmts[$k]{block} } }, "$file:$stmts[$k]{line}:\n$stmts[$k]{sql}$p\n" if $p ne '';
	}
	for my $b (@blocks)
	{
		next if defined $b->{skip};
		my $p = $problems{$b};
		ok(!$p, "$file:$b->{line}: the example runs and shows its output") or diag(join("\n", @$p));
	}
}

diag(scalar(@skipped) . " sql block(s) not run:\n" . join('', map { "  $_\n" } @skipped));

# Completeness
$node->safe_psql('postgres', 'CREATE DATABASE manual_catalog');
my $functions = $node->safe_psql('manual_catalog', q{
	CREATE EXTENSION ndd;
	WITH f AS (
		SELECT p.oid, p.proname FROM pg_proc p
		JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ndd'),
	support(oid, why) AS (
		SELECT unnest(ARRAY[typinput, typoutput, typreceive, typsend]::oid[]), 'type I/O' FROM pg_type
		UNION ALL SELECT amproc, 'index support' FROM pg_amproc
		UNION ALL SELECT unnest(ARRAY[aggtransfn, aggfinalfn, aggcombinefn, aggserialfn, aggdeserialfn]::oid[]),
		                 'aggregate support' FROM pg_aggregate
		UNION ALL SELECT prosupport, 'planner support' FROM pg_proc
		UNION ALL SELECT unnest(ARRAY[oprrest, oprjoin]::oid[]), 'selectivity' FROM pg_operator
		UNION ALL SELECT oprcode, 'operator implementation' FROM pg_operator
		UNION ALL SELECT oid, 'event trigger' FROM pg_proc WHERE prorettype = 'event_trigger'::regtype
		UNION ALL SELECT oid, 'internal trigger of ndd_maintain_clusters' FROM pg_proc
		WHERE proname IN ('ndd_maintain_clusters_trigger', 'ndd_cluster_step', 'ndd_claim_cluster_lock'))
	SELECT DISTINCT f.proname || '|' || (EXISTS (SELECT FROM support s WHERE s.oid = f.oid))::text
	FROM f ORDER BY 1});
my $settings = $node->safe_psql('manual_catalog', q{
	LOAD 'ndd';
	SELECT string_agg(name, ' ' ORDER BY name) FROM pg_settings WHERE name LIKE 'ndd.%'});

my $docs_run = join '', map { $run_text{$_} // '' } grep { m{^docs/} } @files;
my $reference = do { local (@ARGV, $/) = ("$top/docs/reference.md"); <> } // '';
my (%callable, %all);
for (split /\n/, $functions)
{
	my ($name, $exempt) = split /\|/;
	$all{$name} = 1;
	$callable{$name} = 1 if $exempt eq 'false';
}
# and the functions sql/ndd.sql comments on, in case the installed ndd is
# another version: one not installed is exempt by its name only
my $script = do { local (@ARGV, $/) = ("$top/sql/ndd.sql"); <> } // '';
for my $name ($script =~ /^COMMENT ON (?:FUNCTION|AGGREGATE) (\w+)\(/mg)
{
	next if $all{$name};
	$all{$name} = 1;
	$callable{$name} = 1
	  unless $name =~ /^(gin_|gsimhash_)|_(in|out|recv|send|transfn|combinefn|serialfn|deserialfn|finalfn)$/;
}
my @no_example = grep { $docs_run !~ /\b\Q$_\E\b/ } sort keys %callable;
ok(!@no_example, 'every function of ndd (' . scalar(keys %callable) . ' names) has an example in docs/ that runs')
  or diag('no example: ' . join(', ', @no_example));
my @no_reference = grep { $reference !~ /\b\Q$_\E\b/ } sort keys %all;
# the reference gives each function called by name with its signature as \df shows it
my @signatures = split /\n/, $node->safe_psql('manual_catalog', q{
	SELECT DISTINCT p.proname || '(' || pg_get_function_arguments(p.oid) || ')' FROM pg_proc p
	JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'ndd' ORDER BY 1});
my @no_signature = grep { my ($n) = /^(\w+)\(/; $callable{$n} && index($reference, "`$_`") < 0 } @signatures;
ok(!@no_signature, 'docs/reference.md gives the signature of every function called by name, as \\df shows it')
  or diag("signatures not in docs/reference.md:\n" . join("\n", @no_signature));
ok(!@no_reference, 'every function of ndd (' . scalar(keys %all) . ' names) is named in docs/reference.md')
  or diag('not in docs/reference.md: ' . join(', ', @no_reference));
my @settings = split / /, $settings;
ok(@settings >= 3, "ndd's settings are found: @settings");
my @no_setting = grep { $docs_run !~ /\Q$_\E\b/ } @settings;
ok(!@no_setting, 'every setting ndd.* has an example in docs/ that runs')
  or diag('no example: ' . join(', ', @no_setting));

$node->stop;
done_testing();
