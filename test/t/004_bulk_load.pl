# A bulk load of 100,000 rows in one transaction under
# ndd_reject_near_duplicates: the tokens it claims are rows, not entries in
# the shared lock table, so the load works with the default
# max_locks_per_transaction, and a near-duplicate inside the load is caught.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('bulk');
$node->init;
$node->append_conf('postgresql.conf', "max_locks_per_transaction = 64\nmax_connections = 20");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ndd;
	CREATE TABLE items (id int PRIMARY KEY, sketch minhash);
	CREATE INDEX ON items USING gin (sketch minhash_ops(unit = 'bigint')) WITH (fastupdate = off);
	CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON items
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
});

# 100,000 sets of 60 distinct integers each: no two alike
my $t0 = time;
my ($ret, $out, $err) = $node->psql('postgres', q{
	BEGIN;
	INSERT INTO items
	SELECT g, minhash_sketch(array(SELECT g::bigint * 1000 + i FROM generate_series(1, 60) i))
	FROM generate_series(1, 100000) g;
	SELECT count(*) FROM items;
	COMMIT;});
my $secs = time - $t0;
is($ret, 0, 'a 100,000-row load in one transaction commits') or diag($err);
is($out, '100000', 'every row is in');
note sprintf('the load took %.1f s', $secs);

# the same load with a near-duplicate of row 7 at its end fails as a whole
($ret, $out, $err) = $node->psql('postgres', q{
	INSERT INTO items
	SELECT 100000 + g, minhash_sketch(array(SELECT (100000 + g)::bigint * 1000 + i FROM generate_series(1, 60) i))
	FROM generate_series(1, 1000) g
	UNION ALL
	SELECT 200000, minhash_sketch(array(SELECT 7::bigint * 1000 + i FROM generate_series(1, 59) i))});
like($err, qr/near-duplicate of an existing row.*Key \(id\)=\(7\)/s,
	'a near-duplicate inside a load is rejected, naming the existing row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM items'), '100000', 'and nothing of that load stays');

# the same load under a statement-level trigger: rows checked together
$node->safe_psql('postgres', q{
	CREATE TABLE items2 (id int PRIMARY KEY, sketch minhash);
	CREATE INDEX ON items2 USING gin (sketch minhash_ops(unit = 'bigint'));
	CREATE TRIGGER no_near_duplicates AFTER INSERT ON items2 REFERENCING NEW TABLE AS new_rows
		FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');});
$t0 = time;
($ret, $out, $err) = $node->psql('postgres', q{
	INSERT INTO items2 SELECT id, sketch FROM items;
	SELECT count(*) FROM items2;});
is($ret, 0, 'a 100,000-row load under the statement-level trigger commits') or diag($err);
is($out, '100000', 'every row is in');
note sprintf('the statement-level load took %.1f s', time - $t0);
($ret, $out, $err) = $node->psql('postgres', q{
	INSERT INTO items2
	SELECT 100000 + g, minhash_sketch(array(SELECT (100000 + g)::bigint * 1000 + i FROM generate_series(1, 60) i))
	FROM generate_series(1, 1000) g
	UNION ALL
	SELECT 200000, minhash_sketch(array(SELECT 7::bigint * 1000 + i FROM generate_series(1, 59) i))});
like($err, qr/near-duplicate of an existing row.*Key \(id\)=\(7\)/s,
	'a near-duplicate inside a load is rejected by the statement-level trigger, naming the existing row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM items2'), '100000', 'and nothing of that load stays');

$node->stop;
done_testing();
