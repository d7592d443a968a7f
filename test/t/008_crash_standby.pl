# ndd's indexes are crash- and replica-safe: they write their changes through
# PostgreSQL's GIN and GiST access methods, so a streaming standby answers
# every index query exactly as the primary does, and after a crash (an
# immediate stop in the middle of inserts) recovery leaves indexes that
# return the same rows as a sequential scan.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

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
	FROM generate_series(1, 2000) i;});

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
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
};
my $by_scan = q{
	SET enable_indexscan = off;
	SET enable_bitmapscan = off;
} . $lookups =~ s/SET enable_seqscan = off;//r;

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

# A crash in the middle of inserts: an immediate stop, no checkpoint
my $bg = $primary->background_psql('postgres', on_error_stop => 0);
$bg->query_until(qr/started/, q{
	\echo started
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(4001, 400000) i;
});
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(500001, 500500) i;});
$primary->stop('immediate');
$bg->{run}->kill_kill;
$primary->start;

my $after = $primary->safe_psql('postgres', $lookups);
like($after, qr/\d+,\d+/, 'after recovery the lookups still find near-duplicates');
is($primary->safe_psql('postgres', $by_scan), $after,
	'after crash recovery the indexes answer as a scan does');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id > 500000'), '500',
	'the committed rows survived the crash');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM docs WHERE id BETWEEN 4001 AND 400000'), '0',
	'and the interrupted insert left nothing');
$primary->safe_psql('postgres', q{
	INSERT INTO docs SELECT i, minhash_sketch(doc(i), shingle_size => 1), simhash(doc(i))
	FROM generate_series(600001, 600100) i;
	VACUUM docs;});
is($primary->safe_psql('postgres', $lookups), $primary->safe_psql('postgres', $by_scan),
	'and the recovered indexes take new rows and vacuum');

$standby->stop;
$primary->stop;
done_testing();
