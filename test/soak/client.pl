#!/usr/bin/perl
# One client of the soak test (test/t/013_soak.pl): a psql session driven
# over pipes, which runs operations of one kind until a deadline and logs
# each one to a file, one line each:
#
#   TIME KIND OP OUTCOME [TABLE ID FAM VAR]
#
# TIME is when the outcome was known (epoch seconds), OUTCOME is
#   ok        the statement succeeded (for a write: acknowledged, committed)
#   rejected  a guarded insert refused by ndd_reject_near_duplicates (23505)
#   lost      the connection broke while the statement ran or was sent: it
#             may or may not have committed (the crash)
#   missing   an UPDATE or DELETE of a row the client owns found no row
#   error     anything else (SQLSTATE and message in the next fields, or
#             "timeout": no answer in time): a failure of the test
# A lost connection is reconnected, retrying until the deadline.  Writes
# name the row and the (fam, var) it was given, so that the test can replay
# each client's log and tell what every row it touched must hold.
#
# Arguments, as NAME=VALUE: psql, connstr, kind (guard, write, lookup, topk,
# contain, vacuum), client (a number unique to this client), index and peers
# (its number among the clients of its kind, and how many there are), docs
# and guarded (rows preloaded into each table), start and end (epoch
# seconds), log (file), seed; timeout (seconds to wait for one statement,
# 300 when not given).
use strict;
use warnings;
use IPC::Run;
use IO::Handle;
use Time::HiRes qw(time sleep);

my %arg = map { split /=/, $_, 2 } @ARGV;
for my $name (qw(psql connstr kind client index peers docs guarded start end log seed))
{
	die "client.pl: $name= is missing\n" unless defined $arg{$name};
}
my ($kind, $client, $end) = @arg{qw(kind client end)};
my $op_timeout = $arg{timeout} || 300;
srand($arg{seed} * 1000 + $client);
$SIG{PIPE} = 'IGNORE';

open my $log, '>>', $arg{log} or die "client.pl: cannot open $arg{log}: $!\n";
$log->autoflush(1);

sub say_log
{
	printf $log "%.3f %s %s\n", time, $kind, join ' ', @_;
}

# --- the psql session

my ($in, $out, $err) = ('', '', '');
my $psql;
my $timer = IPC::Run::timer($op_timeout);
my $marker = 0;

# connect(): a new psql session, retried until it answers or the deadline
# passes; false at the deadline
sub connect_psql
{
	while (time < $end)
	{
		($in, $out, $err) = ('', '', '');
		$psql = IPC::Run::start(
			[ $arg{psql}, '-XAtq', '-v', 'ON_ERROR_STOP=0', '-d', $arg{connstr} ],
			'<', \$in, '>', \$out, '2>', \$err, $timer);
		my ($state) = run_sql('SET ndd.similarity_threshold = 0.8');
		return 1 if $state eq '00000';
		finish_psql();
		sleep 0.2;
	}
	return 0;
}

sub finish_psql
{
	return unless $psql;
	eval { $psql->kill_kill(grace => 1) } if $psql->pumpable;
	eval { $psql->finish };
	undef $psql;
}

# run_sql(SQL): (SQLSTATE, ROW_COUNT, output, stderr) of one statement, or
# ('lost') when psql ended (the connection broke: psql exits when it is not
# interactive), or ('timeout')
sub run_sql
{
	my ($sql) = @_;
	$marker++;
	$in .= "$sql;\n\\echo \@\@$marker :SQLSTATE :ROW_COUNT\n";
	$timer->start($op_timeout);
	while ($out !~ /\@\@$marker (\w*) (\d*)\n/)
	{
		return ('lost') unless $psql->pumpable;
		if ($timer->is_expired)
		{
			finish_psql();
			return ('timeout');
		}
		# pump dies when psql has gone before it read all its input
		# (a broken pipe): the statement may or may not have run
		next if eval { $psql->pump; 1 };
		my $timed_out = $timer->is_expired;
		finish_psql();
		return $timed_out ? ('timeout') : ('lost');
	}
	# (the loop's own match is out of scope here)
	$out =~ /\@\@$marker (\w*) (\d*)\n/;
	my ($state, $rows, $result) = ($1, $2, $`);
	my $stderr = $err;
	($out, $err) = ('', '');
	# the server going down: psql reports it and exits, or, when the
	# connection broke while it was idle (its backend killed by an
	# immediate shutdown), fails the statement with no SQLSTATE and stays,
	# without a connection
	if ($state eq '' || $state =~ /^(08|57P0[123])/)
	{
		finish_psql();
		return ('lost');
	}
	return ($state, $rows, $result, $stderr);
}

# --- what each kind does

my $seq = 0;
my $ndocs = $arg{docs};
my $nguarded = $arg{guarded};

# the (fam, var) of a new variant of a family planted in docs: every other
# group of four preloaded rows is four variants of family (id - 1) / 4
sub docs_variant
{
	my $group = 2 * int(rand(int($ndocs / 8)));
	return ($group, ($client + 1) * 100_000_000 + $seq);
}

# rows of docs this client owns: preloaded ids congruent to its index, and
# those it inserted; gone: deleted, or left in doubt by the crash
my (@mine, %gone);

sub pick_mine
{
	for (1 .. 100)
	{
		if (@mine && rand() < 0.5)
		{
			my $i = int(rand(@mine));
			my $id = $mine[$i];
			if ($gone{$id})
			{
				splice @mine, $i, 1;
				next;
			}
			return $id;
		}
		my $id = 1 + $arg{index} + $arg{peers} * int(rand($ndocs / $arg{peers}));
		return $id if $id <= $ndocs && !$gone{$id};
	}
	return undef;
}

# write(OP, TABLE, ID, FAM, VAR, SQL): run a write and log its outcome
sub write_op
{
	my ($op, $table, $id, $fam, $var, $sql) = @_;
	my ($state, $rows, undef, $stderr) = run_sql($sql);
	$stderr //= '';
	my $what = "$table $id $fam $var";
	if ($state eq 'lost')
	{
		say_log($op, 'lost', $what);
		$gone{$id} = 1;
		return 'lost';
	}
	if ($state eq '00000')
	{
		if ($op ne 'insert' && $rows != 1)
		{
			say_log($op, 'missing', $what);
			$gone{$id} = 1;
			return 'missing';
		}
		say_log($op, 'ok', $what);
		return 'ok';
	}
	if ($state eq '23505' && $table eq 'guarded' && $stderr =~ /is a near-duplicate of an existing row/)
	{
		say_log($op, 'rejected', $what);
		return 'rejected';
	}
	$stderr =~ s/\s+/ /g;
	say_log($op, 'error', $what, $state, $stderr);
	$gone{$id} = 1;
	return 'error';
}

# a guarded insert: a near-duplicate of the rows other guard clients insert
# at the same moment (one family per 250 ms), of a preloaded row, or a fresh
# document
sub guard_step
{
	my $id = ($client + 1) * 1_000_000_000 + $seq;
	my $var = ($client + 1) * 100_000_000 + $seq;
	my ($fam, $what);
	my $r = rand();
	if ($r < 0.4)
	{
		($fam, $what) = (3_000_000_000 + int(time * 4), 'race');
	}
	elsif ($r < 0.7)
	{
		($fam, $what) = (2_000_000_000 + 1 + int(rand($nguarded)), 'planted');
	}
	else
	{
		($fam, $var, $what) = (10_000_000_000 + $id, 0, 'fresh');
	}
	write_op("insert-$what", 'guarded', $id, $fam, $var, qq{
		INSERT INTO guarded (id, fam, var, body, sketch)
		SELECT $id, $fam, $var, d.body, minhash_sketch(d.body)
		FROM (SELECT soak_doc($fam, $var) AS body) d});
}

# a write to docs, under live clusters: insert a near-duplicate of a
# planted family or a fresh document, update an owned row to either, or
# delete one
sub write_step
{
	my $r = rand();
	my ($fam, $var) = rand() < 0.5 ? docs_variant()
		: (20_000_000_000 + ($client + 1) * 100_000_000 + $seq, 0);
	if ($r < 0.4)
	{
		my $id = ($client + 1) * 1_000_000_000 + $seq;
		my $outcome = write_op('insert', 'docs', $id, $fam, $var, qq{
			INSERT INTO docs (id, fam, var, body, sketch)
			SELECT $id, $fam, $var, d.body, minhash_sketch(d.body)
			FROM (SELECT soak_doc($fam, $var) AS body) d});
		push @mine, $id if $outcome eq 'ok';
		return;
	}
	my $id = pick_mine();
	return unless defined $id;
	if ($r < 0.7)
	{
		write_op('update', 'docs', $id, $fam, $var, qq{
			UPDATE docs t SET fam = $fam, var = $var, body = d.body, sketch = minhash_sketch(d.body)
			FROM (SELECT soak_doc($fam, $var) AS body) d WHERE t.id = $id});
	}
	else
	{
		write_op('delete', 'docs', $id, 0, 0, "DELETE FROM docs WHERE id = $id");
		$gone{$id} = 1;
	}
}

# read(OP, SQL): run a read and log its outcome
sub read_op
{
	my ($op, $sql) = @_;
	my ($state, undef, undef, $stderr) = run_sql($sql);
	if ($state eq 'lost' || $state eq '00000')
	{
		say_log($op, $state eq 'lost' ? 'lost' : 'ok');
		return;
	}
	$stderr //= '';
	$stderr =~ s/\s+/ /g;
	say_log($op, 'error', $state, $stderr);
}

my @vacuum = qw(guarded docs docs_clusters);
my $step = {
	guard => \&guard_step,
	write => \&write_step,
	lookup => sub {
		my ($fam, $var) = docs_variant();
		if (rand() < 0.5)
		{
			read_op('lookup-docs', "SELECT count(*) FROM docs WHERE sketch % minhash_sketch(soak_doc($fam, $var))");
		}
		else
		{
			$fam = 2_000_000_000 + 1 + int(rand($nguarded));
			read_op('lookup-guarded', "SELECT count(*) FROM guarded "
				. "WHERE sketch % ROW(minhash_sketch(soak_doc($fam, $var)), 0.85)::minhash_query");
		}
	},
	topk => sub {
		my ($fam, $var) = docs_variant();
		read_op('topk', "SELECT count(*) FROM near_duplicate_top_k('docs', 'sketch', 'id', "
			. "minhash_sketch(soak_doc($fam, $var)), 3)");
	},
	contain => sub {
		my ($fam) = docs_variant();
		my $from = 1 + int(rand(20));
		read_op('contain', "SELECT count(*) FROM docs "
			. "WHERE body @> containment_query(soak_passage($fam, $from, 15), 0.6)");
	},
	vacuum => sub {
		my $table = shift @vacuum;
		push @vacuum, $table;
		read_op("vacuum-$table", "VACUUM $table");
		sleep 0.5;
	},
}->{$kind} or die "client.pl: unknown kind $kind\n";

sleep $arg{start} - time if $arg{start} > time;
connect_psql() or exit 0;
while (time < $end)
{
	$seq++;
	$step->();
	next if $psql && $psql->pumpable;
	finish_psql();
	connect_psql() or last;
	say_log('reconnect', 'ok');
}
if ($psql)
{
	$in .= "\\q\n";
	eval { $psql->finish };
}
close $log;
exit 0;
