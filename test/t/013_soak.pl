# The soak test: every promise of ndd at once, for a while, with a crash in
# the middle.  A primary with a streaming standby holds docs (the corpus,
# with sketches, the default minhash_ops index, a containment_ops index and
# clusters kept by ndd_maintain_clusters) and guarded (a row-level
# ndd_reject_near_duplicates trigger at 0.8, with its minhash_ops index).
# Clients of six kinds (test/soak/client.pl) work on them at once: guarded
# inserts (near-duplicates of each other inserted at the same moment, of
# stored rows, and fresh rows), inserts, updates and deletes of docs under
# live clusters, % lookups, top-k, containment searches and VACUUM.  Halfway
# through, the primary is stopped with pg_ctl -m immediate and started
# again; the clients reconnect.  Afterwards every invariant is one
# assertion with its number:
#   - no near-duplicate pair among the committed guarded rows
#     (near_duplicate_pairs, and an exact computation over band keys);
#   - the cluster table equals near_duplicate_clusters recomputed;
#   - every index answers sample queries of each kind as a sequential scan;
#   - amcheck is clean (bt_index_check; gin_index_check where amcheck has
#     it, PostgreSQL 18), on the primary and on the standby;
#   - the standby equals the primary (rows and a checksum per table);
#   - no write acknowledged to a client is missing, none rejected or never
#     sent is there, and a write in doubt at the crash left one of its two
#     states;
#   - no client met an error other than the guard's 23505 and the crash's
#     lost connections, and no server process crashed;
#   - every client kind worked before and after the crash (operations per
#     second of each are printed; speed is never a pass or a fail).
#
# By default (the test command) it is the short form: 100,000 documents,
# 8 clients for 60 s.  test/soak/run.sh runs the long form, 1,000,000
# documents for 10 minutes; these set its size:
#   NDD_SOAK_DOCS     documents, three quarters in docs, the rest in guarded
#   NDD_SOAK_SECONDS  how long the clients run (the crash is halfway)
#   NDD_SOAK_CLIENTS  how many clients, of the kinds guard, write, lookup,
#                     topk, contain, vacuum, guard, write, in turn
#   NDD_SOAK_SAMPLES  sample lookups and top-k searches compared with a scan
#                     (10; a quarter as many containment searches, at least 3)
#   NDD_SOAK_SHARED_BUFFERS  shared_buffers of both servers (256MB)
#   NDD_SOAK_OP_TIMEOUT  seconds a client waits for one statement (300)
use strict;
use warnings;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $total = $ENV{NDD_SOAK_DOCS} || 100_000;
my $seconds = $ENV{NDD_SOAK_SECONDS} || 60;
my $nclients = $ENV{NDD_SOAK_CLIENTS} || 8;
my $nsamples = $ENV{NDD_SOAK_SAMPLES} || 10;
my $shared_buffers = $ENV{NDD_SOAK_SHARED_BUFFERS} || '256MB';
my $ndocs = int($total * 3 / 4);
my $nguarded = $total - $ndocs;
my $soak_dir = "$FindBin::Bin/../soak";
# pg_ctl start waits this long for crash recovery (60 s by default)
$ENV{PGCTLTIMEOUT} ||= 1800;

# 1,234,567
sub n
{
	my $n = reverse shift;
	$n =~ s/(\d{3})(?=\d)/$1,/g;
	return scalar reverse $n;
}

my @timings;

# timed(WHAT, CODE): run CODE, note and keep how long it took
sub timed
{
	my ($what, $code) = @_;
	my $t = time;
	my @r = $code->();
	push @timings, sprintf('%s: %.1f s', $what, time - $t);
	note $timings[-1];
	return wantarray ? @r : $r[0];
}

note "soak: $total documents ($ndocs in docs, $nguarded in guarded), $nclients clients for $seconds s";

my $primary = PostgreSQL::Test::Cluster->new('soak_primary');
$primary->init(allows_streaming => 1);
# allows_streaming makes a small server (1MB of shared_buffers, 10
# connections); log_statement = all would log every client statement
$primary->append_conf('postgresql.conf', qq{
shared_buffers = $shared_buffers
max_connections = 50
max_wal_size = 2GB
maintenance_work_mem = 256MB
jit = off
log_statement = none
log_checkpoints = on
});
$primary->start;
my $version = $primary->safe_psql('postgres', 'SHOW server_version');
note "PostgreSQL $version";

# --- the schema and the documents

$primary->safe_psql('postgres', PostgreSQL::Test::Utils::slurp_file("$soak_dir/schema.sql"));

# in_background(SQL): run SQL in a psql of its own; ->finish waits for it
# (two cores build two things at once)
sub in_background
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ $primary->installed_command('psql'), '-XAtq', '-v', 'ON_ERROR_STOP=1',
		  '-d', $primary->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	return sub {
		$h->finish;
		die "background statement failed: $err" if $h->result(0) != 0;
	};
}

timed("docs: $ndocs rows with sketches; guarded: $nguarded rows, its index and the guard", sub {
	my $docs = in_background(qq{
		CREATE TABLE docs (id bigint PRIMARY KEY, fam bigint NOT NULL, var bigint NOT NULL,
		                   body text, sketch minhash);
		INSERT INTO docs (id, fam, var, body, sketch)
		SELECT i, s.fam, s.var, s.body, minhash_sketch(s.body)
		FROM generate_series(1, $ndocs) i,
		     LATERAL (SELECT soak_fam(i) AS fam, soak_var(i) AS var) f,
		     LATERAL (SELECT f.fam, f.var, soak_doc(f.fam, f.var) AS body OFFSET 0) s;});
	$primary->safe_psql('postgres', qq{
		CREATE TABLE guarded (id bigint PRIMARY KEY, fam bigint NOT NULL, var bigint NOT NULL,
		                      body text, sketch minhash);
		INSERT INTO guarded (id, fam, var, body, sketch)
		SELECT i, 2000000000 + i, 0, s.body, minhash_sketch(s.body)
		FROM generate_series(1, $nguarded) i,
		     LATERAL (SELECT soak_doc(2000000000 + i, 0) AS body OFFSET 0) s;
		CREATE INDEX guarded_sketch ON guarded USING gin (sketch minhash_ops);
		CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded
		    FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');});
	$docs->();
});
timed('docs: the minhash_ops and containment_ops indexes', sub {
	my $containment = in_background('CREATE INDEX docs_body ON docs USING gin (body containment_ops)');
	$primary->safe_psql('postgres', 'CREATE INDEX docs_sketch ON docs USING gin (sketch minhash_ops)');
	$containment->();
});
timed('docs: ndd_maintain_clusters', sub {
	$primary->safe_psql('postgres', "SELECT ndd_maintain_clusters('docs', 'sketch', 'id', 0.8); VACUUM ANALYZE;")
});
my ($clustered, $clusters) = split /\|/, $primary->safe_psql('postgres',
	'SELECT count(*), count(DISTINCT cluster_id) FROM docs_clusters');
note "before the soak: $clustered rows of docs in $clusters clusters";

# --- the standby

# the slot reserves WAL from its creation on, and says so on disk: a slot
# that reserves only once the standby connects keeps its restart_lsn in
# memory until the next checkpoint, so a crash before one forgets it and
# the end-of-recovery checkpoint may remove WAL the standby still needs
# ("requested WAL segment ... has already been removed")
$primary->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('standby', true)");
timed('base backup', sub { $primary->backup('base') });
my $standby = PostgreSQL::Test::Cluster->new('soak_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby'");
$standby->start;
$primary->wait_for_catchup($standby);

# --- the clients, with the crash halfway

my $logdir = PostgreSQL::Test::Utils::tempdir();
my @cycle = qw(guard write lookup topk contain vacuum guard write);
my (@kinds, %peers, @clients);
push @kinds, $cycle[ $_ % @cycle ] for 0 .. $nclients - 1;
my $t0 = time + 2;
my $t_end = $t0 + $seconds;
for my $c (0 .. $nclients - 1)
{
	my $kind = $kinds[$c];
	my $index = $peers{$kind}++;
	push @clients, [ $c, $kind, $index ];
}
my @handles;
for my $client (@clients)
{
	my ($c, $kind, $index) = @$client;
	push @handles, IPC::Run::start(
		[ $^X, "$soak_dir/client.pl",
		  'psql=' . $primary->installed_command('psql'),
		  'connstr=' . $primary->connstr('postgres'),
		  "kind=$kind", "client=$c", "index=$index", "peers=$peers{$kind}",
		  "docs=$ndocs", "guarded=$nguarded", "start=$t0", "end=$t_end",
		  "log=$logdir/client$c.log", 'seed=1', 'timeout=' . ($ENV{NDD_SOAK_OP_TIMEOUT} || 300) ],
		'>', "$logdir/client$c.out", '2>&1');
}
note 'clients: ' . join ', ', map { "$_ $peers{$_}" } sort keys %peers;

my $t_crash = $t0 + $seconds / 2;
sleep $t_crash - time if $t_crash > time;
my $t_stop = time;
$primary->stop('immediate');
$primary->start;
my $t_up = time;
my $target = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
my $caught = 0;
while (time < $t_up + $PostgreSQL::Test::Utils::timeout_default)
{
	$caught = $standby->safe_psql('postgres',
		"SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn") eq 't';
	last if $caught;
	sleep 0.1;
}
my $t_caught = time;
ok($caught, sprintf('the primary accepted connections %.1f s after the immediate stop; '
		. 'the standby had replayed all its WAL %.1f s after the stop', $t_up - $t_stop,
		$t_caught - $t_stop));

$_->finish for @handles;
for my $c (0 .. $nclients - 1)
{
	my $out = PostgreSQL::Test::Utils::slurp_file("$logdir/client$c.out");
	diag "client $c said: $out" if $out ne '';
}

# --- what the clients saw

my %ops;		# kind => [before, after]
my (%outcomes, @errors, @lost_outside);
my %expect;		# "table id" => [states]: "fam var" or "absent"
my %writes;		# op outcome => count
my $reconnects = 0;
my @back;		# client => its first operation after the crash

# the (fam, var) a preloaded row of docs was given (schema.sql's soak_fam
# and soak_var)
sub preload_state
{
	my ($table, $id) = @_;
	return (2_000_000_000 + $id) . ' 0' if $table eq 'guarded';
	my $g = int(($id - 1) / 4);
	return $g % 2 == 0 ? "$g " . (($id - 1) % 4) : (1_000_000_000 + $id) . ' 0';
}

sub current_state
{
	my ($key, $table, $id) = @_;
	return preload_state($table, $id) unless $expect{$key};
	die "client log: row $key touched again after the crash left it in doubt\n"
	  if @{ $expect{$key} } != 1;
	return $expect{$key}[0];
}

for my $c (0 .. $nclients - 1)
{
	open my $fh, '<', "$logdir/client$c.log" or die "client $c wrote no log: $!";
	while (my $line = <$fh>)
	{
		chomp $line;
		my ($t, $kind, $op, $outcome, $table, $id, $fam, $var) = split / /, $line;
		if ($op eq 'reconnect')
		{
			$reconnects++;
			next;
		}
		$outcomes{"$kind $outcome"}++;
		if ($outcome eq 'ok' || $outcome eq 'rejected')
		{
			$ops{$kind} ||= [ 0, 0 ];
			$ops{$kind}[0]++ if $t < $t_stop;
			$ops{$kind}[1]++ if $t >= $t_up;
			$back[$c] //= $t if $t >= $t_up;
		}
		elsif ($outcome eq 'lost')
		{
			# a client sees its connection gone when it next uses it,
			# soon after the stop; a loss before the stop or long after
			# the restart is a server process that died
			push @lost_outside, $line if $t < $t_stop || $t > $t_up + 30;
		}
		else
		{
			push @errors, "client $c: $line";
		}
		next unless defined $table && $outcome ne 'error';
		my $key = "$table $id";
		my $state = "$fam $var";
		$op =~ s/-.*//;
		$writes{"$op $outcome"}++;
		if ($op eq 'insert')
		{
			$expect{$key} = $outcome eq 'ok' ? [$state]
			  : $outcome eq 'rejected' ? ['absent']
			  : [ 'absent', $state ];
		}
		elsif ($op eq 'update' || $op eq 'delete')
		{
			$state = 'absent' if $op eq 'delete';
			my $before = current_state($key, $table, $id);
			$expect{$key} = $outcome eq 'ok' ? [$state]
			  : $outcome eq 'lost' ? [ $before, $state ]
			  : ['absent'];		# missing: it is reported as an error already
		}
	}
	close $fh;
}

my $lost = 0;
$lost += $outcomes{$_} for grep { / lost$/ } keys %outcomes;
is(scalar(@errors), 0, sprintf('no client error: %s guarded inserts rejected as near-duplicates (23505), '
		. '%s statements lost with their connection in the crash, %s unexpected errors',
		n($outcomes{'guard rejected'} // 0), n($lost), n(scalar @errors)))
  or diag join "\n", @errors[ 0 .. ($#errors < 20 ? $#errors : 19) ];
is(scalar(@lost_outside), 0, sprintf('%d connections lost outside the crash', scalar @lost_outside))
  or diag join "\n", @lost_outside[ 0 .. ($#lost_outside < 20 ? $#lost_outside : 19) ];

my $crashed = 0;
for my $node ($primary, $standby)
{
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	$crashed += () = $log =~ /terminated by signal|PANIC:|TRAP:/g;
}
is($crashed, 0, "$crashed server processes crashed (the logs of both servers)");

# --- every acknowledged write is there, and nothing else

my %actual;
for my $table (qw(docs guarded))
{
	my @ids = map { (split / /)[1] } grep { /^$table / } keys %expect;
	next unless @ids;
	for my $row (split /\n/, $primary->safe_psql('postgres',
			"SELECT id, fam, var FROM $table WHERE id = ANY ('{" . join(',', @ids) . "}')"))
	{
		my ($id, $fam, $var) = split /\|/, $row;
		$actual{"$table $id"} = "$fam $var";
	}
}
my ($wrong, $doubt) = (0, 0);
for my $key (sort keys %expect)
{
	my $have = $actual{$key} // 'absent';
	$doubt++ if @{ $expect{$key} } > 1;
	next if grep { $_ eq $have } @{ $expect{$key} };
	$wrong++;
	diag "$key holds $have, where the clients' logs say: @{ $expect{$key} }" if $wrong <= 20;
}
my @touched = map { (split / /)[1] } grep { /^docs / && (split / /)[1] <= $ndocs } keys %expect;
my ($untouched, $changed) = split /\|/, $primary->safe_psql('postgres', qq{
	SELECT count(*), count(*) FILTER (WHERE (fam, var) IS DISTINCT FROM (soak_fam(id), soak_var(id)))
	FROM docs WHERE id <= $ndocs AND id <> ALL ('{@{[ join ',', @touched ]}}'::bigint[])});
my ($guarded_kept, $phantoms) = split /\|/, $primary->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM guarded WHERE id <= $nguarded AND fam = 2000000000 + id),
	       (SELECT count(*) FROM docs WHERE id > $ndocs) + (SELECT count(*) FROM guarded WHERE id > $nguarded)});
$phantoms -= grep { /^(docs|guarded) (\d+)$/ && $2 > ($1 eq 'docs' ? $ndocs : $nguarded) && defined $actual{$_} } keys %expect;
$wrong += $changed + ($ndocs - scalar(@touched) - $untouched) + ($nguarded - $guarded_kept) + $phantoms;
is($wrong, 0, sprintf('no acknowledged write missing: %s inserts, %s updates, %s deletes acknowledged '
		. 'and %s guarded inserts rejected, checked row by row; %s writes in doubt at the crash left '
		. 'one of their two states; %s untouched rows as loaded; %s rows no client wrote',
		n(($writes{'insert ok'} // 0)), n($writes{'update ok'} // 0), n($writes{'delete ok'} // 0),
		n($writes{'insert rejected'} // 0), n($doubt), n($untouched + $guarded_kept), n($phantoms)));

# --- the guard: no near-duplicate pair among the committed guarded rows

$primary->wait_for_catchup($standby);
my $guarded_rows = $primary->safe_psql('postgres', 'SELECT count(*) FROM guarded');
my $pairs = timed('near_duplicate_pairs of guarded', sub {
	$primary->safe_psql('postgres',
		"SELECT count(*) FROM near_duplicate_pairs('guarded', 'sketch', 'id', 0.8)")
});
# exact, apart from discovery: a pair at 0.8 agrees on at least 103 of the
# 128 positions, so it shares at least 7 of 32 bands of 4 positions, and
# their keys; every pair that shares a key and holds a row the clients
# inserted is checked
my ($candidates, $near) = split /\|/, timed('guarded pairs by band keys', sub {
	$primary->safe_psql('postgres', qq{
		SET work_mem = '256MB';
		CREATE TEMP TABLE k AS
		SELECT g.id, unnest(minhash_band_keys(g.sketch, 32, 4)) AS key FROM guarded g;
		ANALYZE k;
		WITH c AS (SELECT DISTINCT least(a.id, b.id) AS a, greatest(a.id, b.id) AS b
		           FROM k a JOIN k b ON b.key = a.key AND b.id <> a.id
		           WHERE a.id > $nguarded)
		SELECT count(*), count(*) FILTER (WHERE similarity(x.sketch, y.sketch) >= 0.8)
		FROM c JOIN guarded x ON x.id = c.a JOIN guarded y ON y.id = c.b})
});
is("$pairs $near", '0 0', sprintf('%s near-duplicate pairs at 0.8 among %s guarded rows '
		. '(near_duplicate_pairs: %s; similarity of the %s pairs with a row the clients inserted that share a band: %s)',
		n($pairs + $near), n($guarded_rows), n($pairs), n($candidates), n($near)));

# --- live clusters: the cluster table is what discovery says now

my ($cl_rows, $cl_clusters, $differ) = split /\|/, timed('near_duplicate_clusters of docs', sub {
	$primary->safe_psql('postgres', q{
		CREATE TEMP TABLE recomputed AS
		SELECT id, cluster_id FROM near_duplicate_clusters('docs', 'sketch', 'id', 0.8);
		SELECT (SELECT count(*) FROM docs_clusters), (SELECT count(DISTINCT cluster_id) FROM docs_clusters),
		       (SELECT count(*) FROM ((TABLE docs_clusters EXCEPT TABLE recomputed)
		                              UNION ALL (TABLE recomputed EXCEPT TABLE docs_clusters)) d)})
});
is($differ, 0, sprintf('docs_clusters equals near_duplicate_clusters recomputed: %s rows differ, '
		. 'of %s rows in %s clusters (%s rows in %s clusters before the soak)',
		n($differ), n($cl_rows), n($cl_clusters), n($clustered), n($clusters)));

# --- every index answers as a sequential scan

# sample queries of each kind, one answer per line: the families planted in
# docs (every other group of 4 rows), new variants of them, passages of
# them; a quarter as many containment searches, whose scan shingles every
# document again
my $ncontains = int(($nsamples + 3) / 4);
my (@lookups, @contains, @topks, @samples);
for my $s (1 .. $nsamples)
{
	my $fam = 2 * (($s * 7919) % int($ndocs / 8));
	my $gfam = 2_000_000_000 + 1 + ($s * 7919) % $nguarded;
	my $var = 900_000_000 + $s;
	my $t = (0.8, 0.9)[ $s % 2 ];
	push @lookups,
	  "SELECT 'docs $s ' || coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM docs "
	  . "WHERE sketch % ROW(minhash_sketch(soak_doc($fam, $var)), $t)::minhash_query;",
	  "SELECT 'guarded $s ' || coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM guarded "
	  . "WHERE sketch % minhash_sketch(soak_doc($gfam, $var));";
	push @topks,
	  "SELECT 'topk $s ' || string_agg(id || ':' || similarity, ',' ORDER BY similarity DESC, id) "
	  . "FROM near_duplicate_top_k('docs', 'sketch', 'id', minhash_sketch(soak_doc($fam, $var)), 3);";
	push @samples, "('docs', $s, $t, minhash_sketch(soak_doc($fam, $var)), NULL)",
	  "('guarded', $s, 0.8, minhash_sketch(soak_doc($gfam, $var)), NULL)",
	  "('topk', $s, NULL, minhash_sketch(soak_doc($fam, $var)), NULL)";
	next if $s > $ncontains;
	my ($from, $ct) = (1 + $s % 20, (0.3, 0.6, 0.9)[ $s % 3 ]);
	push @contains,
	  "SELECT 'contain $s ' || coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM docs "
	  . "WHERE body @> containment_query(soak_passage($fam, $from, 15), $ct);";
	push @samples, "('contain', $s, $ct, NULL, soak_passage($fam, $from, 15))";
}
my $setup = "SET ndd.similarity_threshold = 0.8;\n";
my $by_index = $setup . "SET enable_seqscan = off;\n" . join("\n", @lookups, @contains, @topks);
my $by_bitmap = $setup . "SET enable_seqscan = off;\nSET ndd.lookup_scan = off;\n" . join("\n", @lookups, @contains);
# the same answers by sequential scans: lookups and containment as joins
# that read each table once for all the samples of a kind, top-k as one
# scan per sample, ORDER BY similarity DESC, id LIMIT 3
my $by_scan = $setup . q{
	SET enable_indexscan = off;
	SET enable_bitmapscan = off;
	SET ndd.lookup_scan = off;
	SET work_mem = '256MB';
	CREATE TEMP TABLE samples (kind text, s int, t float8, q minhash, passage text);
	INSERT INTO samples VALUES } . join(",\n", @samples) . q{;
	CREATE TEMP TABLE hits AS
	SELECT q.kind, q.s, d.id, NULL::float8 AS sim FROM docs d JOIN samples q
	ON q.kind = 'docs' AND d.sketch % ROW(q.q, q.t)::minhash_query
	UNION ALL
	SELECT q.kind, q.s, d.id, NULL FROM guarded d JOIN samples q
	ON q.kind = 'guarded' AND d.sketch % q.q
	UNION ALL
	SELECT q.kind, q.s, d.id, NULL FROM docs d JOIN samples q
	ON q.kind = 'contain' AND d.body @> containment_query(q.passage, q.t)
	UNION ALL
	SELECT q.kind, q.s, x.id, x.sim FROM samples q,
	LATERAL (SELECT d.id, similarity(d.sketch, q.q) AS sim FROM docs d WHERE d.sketch IS NOT NULL
	         ORDER BY 2 DESC, 1 LIMIT 3) x
	WHERE q.kind = 'topk';
	SELECT q.kind || ' ' || q.s || ' ' || coalesce(string_agg(h.id || coalesce(':' || h.sim, ''), ','
	                                                          ORDER BY h.sim DESC, h.id), '')
	FROM samples q LEFT JOIN hits h ON h.kind = q.kind AND h.s = q.s
	GROUP BY q.kind, q.s ORDER BY q.kind, q.s;
};

my $scan_answers = timed('sample queries by scan', sub { $primary->safe_psql('postgres', $by_scan) });
my $index_answers = timed('sample queries by index', sub { $primary->safe_psql('postgres', $by_index) });
my $bitmap_answers = $primary->safe_psql('postgres', $by_bitmap);
my @scan = split /\n/, $scan_answers;
my %scan = map { /^(\S+ \d+) / ? ($1 => $_) : () } @scan;
my ($agree, $asked, $found) = (0, 0, 0);
for my $answer (split(/\n/, $index_answers), split(/\n/, $bitmap_answers))
{
	my ($query) = $answer =~ /^(\S+ \d+) /;
	$asked++;
	if (defined $query && ($scan{$query} // '') eq $answer)
	{
		$agree++;
	}
	else
	{
		diag "by index: $answer\nby scan:  " . ($scan{$query // ''} // '(none)');
	}
}
$found += () = $scan_answers =~ /\d+(?::[\d.e-]+)?(?=,|$)/mg;
my @plans = map {
	my ($ret, $plan) = $primary->psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) " . s/^SELECT '[^']*' \|\| /SELECT /r);
	$plan =~ /Index Scan|Custom Scan/ ? 1 : 0
} ($lookups[0], $lookups[1], $contains[0]);
is($agree, $asked, sprintf('%d of %d sample answers by index equal a sequential scan\'s '
		. '(%d %% lookups on docs and on guarded, %d containment searches, both by the lookup scan and by GIN; '
		. '%d top-k; %s rows); %d of 3 plans use an index',
		$agree, $asked, 2 * $nsamples, $ncontains, $nsamples, n($found), scalar grep { $_ } @plans));
is(scalar(grep { $_ } @plans), 3, 'the lookups and the containment search were planned with an index');

# the standby answers as the primary's scan, by its indexes
my $standby_answers = $standby->safe_psql('postgres', $by_index);
my %standby = map { /^(\S+ \d+) / ? ($1 => $_) : () } split /\n/, $standby_answers;
my $standby_agree = grep { ($standby{$_} // '') eq $scan{$_} } keys %scan;
is($standby_agree, scalar(keys %scan), sprintf('on the standby %d of %d sample answers by index equal '
		. 'the primary\'s scan', $standby_agree, scalar keys %scan));

# --- amcheck

my $gin_check = $primary->safe_psql('postgres',
	"SELECT to_regprocedure('gin_index_check(regclass)') IS NOT NULL") eq 't';
my $amcheck = $primary->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'amcheck'");
my $indexes_sql = q{
	SELECT string_agg(c.oid::regclass::text, ' ' ORDER BY c.relname)
	FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
	JOIN pg_class t ON t.oid = i.indrelid
	WHERE am.amname = '%s' AND t.relnamespace = 'public'::regnamespace AND t.relpersistence = 'p'};
my @btrees = split ' ', $primary->safe_psql('postgres', sprintf($indexes_sql, 'btree'));
my @gins = split ' ', $primary->safe_psql('postgres', sprintf($indexes_sql, 'gin'));
my @amcheck_errors;
timed('amcheck', sub {
	for my $node ($primary, $standby)
	{
		for my $index (@btrees)
		{
			my ($ret, $out, $err) = $node->psql('postgres', "SELECT bt_index_check('$index', true)");
			push @amcheck_errors, $node->name . " $index: $err" if $ret != 0;
		}
		next unless $gin_check;
		for my $index (@gins)
		{
			my ($ret, $out, $err) = $node->psql('postgres', "SELECT gin_index_check('$index')");
			push @amcheck_errors, $node->name . " $index: $err" if $ret != 0;
		}
	}
});
is(scalar(@amcheck_errors), 0, sprintf('amcheck %s finds nothing wrong on the primary and the standby: '
		. '%d btree indexes by bt_index_check with heapallindexed (%s); %s',
		$amcheck, scalar @btrees, join(' ', @btrees),
		$gin_check ? sprintf('%d GIN indexes by gin_index_check (%s)', scalar @gins, join(' ', @gins))
		: "gin_index_check: not available in amcheck $amcheck (PostgreSQL $version), "
		. scalar(@gins) . ' GIN indexes not checked by it'))
  or diag join "\n", @amcheck_errors;

# --- the standby equals the primary

my $checksums_sql = join "\nUNION ALL ", map {
	"SELECT '$_', count(*), md5(coalesce(string_agg(md5(t::text), '' ORDER BY id), '')) FROM $_ t"
} qw(docs guarded docs_clusters);
$primary->wait_for_catchup($standby);
my $primary_sums = timed('checksums', sub { $primary->safe_psql('postgres', $checksums_sql) });
my $standby_sums = $standby->safe_psql('postgres', $checksums_sql);
my $rows = 0;
$rows += (split /\|/)[1] for split /\n/, $primary_sums;
is($standby_sums, $primary_sums, sprintf('the standby equals the primary: 3 tables, %s rows, '
		. 'equal counts and checksums', n($rows)));

# --- throughput, before and after the crash

my $before = $t_stop - $t0;
my $after = $t_end - $t_up;
my @rates = map {
	sprintf('%s %.1f/%.1f', $_, $ops{$_}[0] / $before, $ops{$_}[1] / $after)
} sort keys %ops;
my @idle = grep { !$ops{$_} || !$ops{$_}[0] || !$ops{$_}[1] } sort keys %peers;
my $all_back = 0;
for my $c (0 .. $nclients - 1)
{
	$all_back = $back[$c] - $t_stop if defined $back[$c] && $back[$c] - $t_stop > $all_back;
}
is(scalar(@idle), 0, 'every client kind worked before and after the crash, operations per second '
	  . sprintf('before/after (%.0f s/%.0f s): ', $before, $after) . join(', ', @rates)
	  . sprintf('; %d reconnections, every client working again %.1f s after the stop', $reconnects, $all_back))
  or diag 'no operation before or after the crash: ' . join(' ', @idle);

note 'operations: ' . join(', ', map { "$_ " . n($outcomes{$_}) } sort keys %outcomes);
note $_ for @timings;

$standby->stop;
$primary->stop;
done_testing();
