# A hostile role on a shared server, with only CONNECT and CREATE on a schema
# that is on everybody's search_path.  It defines functions and operators
# with ndd's names and with every argument-type combination ndd's SQL
# compares, each raising a WARNING with a marker, and tries to read, fill and
# lock everything ndd owns.  The superuser and a table owner then use every
# part of ndd: none of the hostile code runs (the marker never reaches the
# server log), every answer equals the one given before the hostile objects
# existed, and the owner's guarded inserts never wait on the hostile role.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init;
$node->append_conf('postgresql.conf', "log_min_messages = warning\nlock_timeout = '5s'");
$node->start;

# ndd in a schema of its own; the roles look there first, then in public
$node->safe_psql('postgres', q{
	CREATE SCHEMA ndd;
	CREATE EXTENSION ndd SCHEMA ndd;
	CREATE ROLE owner_role LOGIN;
	CREATE ROLE hostile LOGIN;
	GRANT CREATE ON SCHEMA public TO hostile;
	GRANT CREATE ON SCHEMA public TO owner_role;
	GRANT USAGE ON SCHEMA ndd TO owner_role, hostile;
	ALTER ROLE postgres SET search_path = ndd, public;
	ALTER ROLE owner_role SET search_path = ndd, public;
	ALTER ROLE hostile SET search_path = ndd, public;
});

# The owner's tables: minhash and simhash, guarded (with and without
# verification), with indexes, and a table for discovery.
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.doc(family int, member int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
		SELECT (SELECT pg_catalog.string_agg('f' || family || 'w' || g, ' ') FROM pg_catalog.generate_series(1, 60) g)
		    || CASE WHEN member > 1 THEN ' extra' || member ELSE '' END $$;
	ALTER FUNCTION public.doc(int, int) OWNER TO owner_role;
}, extra_params => []);
$node->safe_psql('postgres', q{
	CREATE TABLE docs (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
	INSERT INTO docs
	SELECT f * 10 + m, doc(f, m), minhash_sketch(doc(f, m)), simhash(doc(f, m))
	FROM generate_series(1, 12) f, generate_series(1, 5) m;
	CREATE INDEX docs_sketch ON docs USING gin (sketch minhash_ops);
	CREATE INDEX docs_fp ON docs USING gin (fp simhash_ops);
	CREATE INDEX docs_fp_gist ON docs USING gist (fp simhash_knn_ops);
	CREATE TABLE guarded (id bigint PRIMARY KEY, body text, sketch minhash);
	-- verified at 0.8: candidates from 3 standard deviations lower, 0.69
	CREATE INDEX ON guarded USING gin (sketch minhash_ops(threshold = 0.69)) WITH (fastupdate = off);
	CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8', 'skip', 'body');
	CREATE TABLE guarded_fp (id bigint PRIMARY KEY, fp simhash);
	CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded_fp
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3', 'skip');
	ALTER TABLE docs OWNER TO owner_role;
	ALTER TABLE guarded OWNER TO owner_role;
	ALTER TABLE guarded_fp OWNER TO owner_role;
}, extra_params => ['-U', 'postgres']);

# Everything a user does with ndd, as one script; its output must not change.
my $uses = q{
	\pset tuples_only on
	SET extra_float_digits = 0;
	-- discovery, both types, with and without verification
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6), p.distance FROM near_duplicate_pairs('docs', 'sketch', 'id') p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('docs', 'sketch', 'id', 0.85, verify_column => 'body') p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, p.distance FROM near_duplicate_pairs('docs', 'fp', 'id', max_distance => 4) p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs('docs', 'fp', 'id', 0.8, verify_column => 'body', max_distance => 4) p ORDER BY 1, 2;
	SELECT pg_catalog.count(*) FROM near_duplicate_pairs('docs', 'sketch', 'id', progress => true) p;
	-- clusters
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters('docs', 'sketch', 'id') c ORDER BY 1;
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters('docs', 'sketch', 'id', representative_order => 'pg_catalog.length(body) DESC') c ORDER BY 1;
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters('docs', 'fp', 'id', max_distance => 4, verify_column => 'body') c ORDER BY 1;
	-- lookups: %, <->, similar(), minhash_query; simhash % and <->
	SET enable_seqscan = off;
	SELECT d.id FROM docs d WHERE d.sketch % minhash_sketch(doc(3, 1)) ORDER BY 1;
	SELECT d.id FROM docs d WHERE similar(d.sketch, minhash_sketch(doc(3, 1)), 0.9) ORDER BY 1;
	SELECT d.id FROM docs d WHERE d.sketch % ROW(minhash_sketch(doc(3, 1)), 0.9)::minhash_query ORDER BY 1;
	SELECT d.id FROM docs d WHERE d.fp % simhash(doc(4, 2)) ORDER BY 1;
	SELECT d.id, d.fp <-> simhash(doc(4, 2)) FROM docs d ORDER BY d.fp <-> simhash(doc(4, 2)), d.id LIMIT 3;
	RESET enable_seqscan;
	SELECT d.id, round(similarity(d.sketch, minhash_sketch(doc(3, 1)))::numeric, 6),
	       round((d.sketch <-> minhash_sketch(doc(3, 1)))::numeric, 6)
	FROM docs d ORDER BY d.sketch <-> minhash_sketch(doc(3, 1)), d.id LIMIT 3;
	-- helpers
	SELECT show_shingles('one two three four five six', 2);
	SELECT jaccard('one two three four', 'one two three five', 1), jaccard(ARRAY['a', 'b'], ARRAY['b', 'c']),
	       jaccard(ARRAY[1, 2]::bigint[], ARRAY[2, 3]::bigint[]);
	SELECT ndd_fingerprint('Hello, World'), ndd_fingerprint('<b>Hello</b> world', strip_html => true);
	SELECT minhash_settings(minhash_union(d.sketch)) FROM docs d;
	SELECT b.band, b.key FROM minhash_bands(minhash_sketch(doc(1, 1)), 4, 8) b ORDER BY 1;
	SELECT minhash_band_keys(minhash_sketch(doc(1, 1)), 4, 8);
	SELECT minhash_lowbits_agreement(minhash_lowbits(minhash_sketch(doc(1, 1))), minhash_lowbits(minhash_sketch(doc(1, 2))));
	SELECT round(lsh_probability(0.8, 20, 5)::numeric, 6), l.bands, l.rows FROM lsh_params(0.8) l;
	SELECT b.bands, b.rows, b.required, round(b.lower_threshold::numeric, 6) FROM lsh_banding(minhash_sketch(doc(1, 1)), 0.8, 3) b;
	SELECT pg_catalog.cardinality(ndd_colliding(minhash_band_keys(minhash_sketch(doc(1, 1)), 32, 4),
	       (SELECT ndd_colliding_keys(minhash_band_keys(d.sketch, 32, 4), 1000) FROM docs d), 1));
	SELECT simhash_keys(simhash(doc(1, 1))), hamming_distance(simhash(doc(1, 1)), simhash(doc(1, 2))),
	       round(simhash_cosine(simhash(doc(1, 1)), simhash(doc(1, 2)))::numeric, 6);
	SELECT simhash(ARRAY['a', 'b']), simhash(ARRAY[1, 2]::bigint[]), simhash(ARRAY['a', 'b'], ARRAY[1.0, 2.0]::float8[]);
	SELECT simhash(doc(1, 1))::bigint, simhash(doc(1, 1))::bit(64)::simhash;
	SELECT minhash_sketch(ARRAY['a', 'b'])::text, minhash_sketch(ARRAY[1, 2]::bigint[])::text;
	-- I-Match, SpotSigs, ndd_explain
	SELECT imatch_signature(doc(1, 1), (SELECT imatch_lexicon(d.body) FROM docs d), 0.5) = imatch_signature(doc(1, 2), (SELECT imatch_lexicon(d.body) FROM docs d), 0.5);
	SELECT spotsigs_similarity(spotsigs('there is a rose in the garden'), spotsigs('there was a rose in the garden'), 0.1);
	SELECT e.jaccard, e.shingles_a, e.shared, e.total, e.shared_sample, e.only_a_sample, e.only_b_sample FROM ndd_explain(doc(1, 1), doc(1, 2), sample => 2) e;
};

my $before_su = $node->safe_psql('postgres', $uses);
my $before_owner = $node->safe_psql('postgres', $uses, extra_params => ['-U', 'owner_role']);
like($before_su, qr/\S/, 'the uses give answers');

# The hostile role's objects: functions and operators with ndd's names and
# with PostgreSQL's, for every argument-type combination ndd's SQL compares.
# Each says so in the server log when it runs.
my $hostile_sql = q{
	CREATE FUNCTION public.hostile_cmp(anyelement, anyelement) RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN as %', current_user; RETURN true; END $$;
};
my @types = ('float8', 'float4', 'numeric', 'int2', 'int4', 'int8', 'text', 'name', 'oid', 'regclass', 'bytea', 'tid', 'boolean');
my %seen;
for my $l (@types)
{
	for my $r (@types)
	{
		next if $seen{"$l,$r"}++;
		my $fn = "hostile_${l}_$r";
		$hostile_sql .= qq{
	CREATE FUNCTION public.$fn($l, $r) RETURNS boolean LANGUAGE plpgsql AS \$\$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN: $fn as %', current_user; RETURN true; END \$\$;
};
		for my $op ('=', '<>', '<', '<=', '>', '>=')
		{
			$hostile_sql .= "\tCREATE OPERATOR public.$op (LEFTARG = $l, RIGHTARG = $r, PROCEDURE = public.$fn);\n";
		}
	}
}
# arithmetic and text operators, and functions ndd's SQL calls
$hostile_sql .= q{
	CREATE FUNCTION public.hostile_plus(int8, int4) RETURNS int8 LANGUAGE plpgsql AS $$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN: + as %', current_user; RETURN 0; END $$;
	CREATE OPERATOR public.+ (LEFTARG = int8, RIGHTARG = int4, PROCEDURE = public.hostile_plus);
	CREATE FUNCTION public.hostile_concat(text, text) RETURNS text LANGUAGE plpgsql AS $$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN: || as %', current_user; RETURN ''; END $$;
	CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = text, PROCEDURE = public.hostile_concat);
};
my %functions = (
	'unnest(bigint[])' => 'SETOF bigint',
	'unnest(int4[])' => 'SETOF int4',
	'cardinality(bigint[])' => 'int4',
	'format(text, text)' => 'text',
	'format(text, text, text)' => 'text',
	'format(text, name, name)' => 'text',
	'concat(text, text)' => 'text',
	'concat(text, text, text)' => 'text',
	'concat_ws(text, text)' => 'text',
	'min(bigint)' => undef,
	'count(bigint)' => undef,
	'to_regclass(text)' => 'regclass',
	'current_setting(text, boolean)' => 'text',
	'clock_timestamp()' => 'timestamptz',
	'split_part(text, text, int4)' => 'text',
	'length(text)' => 'int4',
	'first_value(bigint)' => undef,
	'row_number()' => undef,
	'show_shingles(text, int4, text, boolean)' => 'text[]',
	'minhash_sketch(text, int4, int4, text, boolean, int4)' => 'minhash',
	'simhash(text, int4, text, boolean, int4)' => 'simhash',
	'similarity(minhash, minhash)' => 'float8',
	'similarity(text, text)' => 'float8',
	'jaccard(text, text, int4, text)' => 'float8',
	'jaccard(text, text, int4, text, boolean)' => 'float8',
	'jaccard(varchar, varchar, int4, text)' => 'float8',
	'hamming_distance(simhash, simhash)' => 'int4',
	'simhash_cosine(simhash, simhash)' => 'float8',
	'simhash_keys(simhash, int4)' => 'bigint[]',
	'minhash_band_keys(minhash, int4, int4)' => 'bigint[]',
	'minhash_lowbits(minhash)' => 'bytea',
	'minhash_lowbits_agreement(bytea, bytea)' => 'int4',
	'ndd_colliding(bigint[], bytea, int4)' => 'bigint[]',
	'lsh_banding(minhash, float8, float8)' => 'record',
	'near_duplicate_pairs(regclass, name, name, float8, name, boolean, int4)' => 'SETOF record',
);
for my $sig (sort keys %functions)
{
	my $ret = $functions{$sig};
	next unless defined $ret;
	my ($name) = $sig =~ /^(\w+)/;
	my $body = $ret =~ /^SETOF/ ? 'RETURN;' : 'RETURN NULL;';
	$ret = 'SETOF record' if $ret eq 'record';
	next if $ret eq 'SETOF record';
	$hostile_sql .= qq{
	CREATE FUNCTION public.$sig RETURNS $ret LANGUAGE plpgsql AS \$\$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN: $name as %', current_user; $body END \$\$;
};
}
# aggregates with PostgreSQL's names
$hostile_sql .= q{
	CREATE FUNCTION public.hostile_agg(bigint, bigint) RETURNS bigint LANGUAGE plpgsql AS $$
	BEGIN RAISE WARNING 'HOSTILE CODE RAN: aggregate as %', current_user; RETURN $2; END $$;
	CREATE AGGREGATE public.min(bigint) (SFUNC = public.hostile_agg, STYPE = bigint);
	CREATE AGGREGATE public.count(bigint) (SFUNC = public.hostile_agg, STYPE = bigint);
};
$node->safe_psql('postgres', $hostile_sql, extra_params => ['-U', 'hostile']);
my $count = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	  WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) = 'hostile'});
cmp_ok($count, '>', 150, "the hostile role defined $count functions");

# the marker must be able to reach the log: the hostile role's own use runs it
$node->psql('postgres', q{SELECT 1::float8 >= 1::numeric}, extra_params => ['-U', 'hostile']);
ok($node->wait_for_log(qr/HOSTILE CODE RAN: hostile_float8_numeric as hostile/),
	'a hostile function called directly does log its marker');
my $log_offset = -s $node->logfile;

# The same uses, as the superuser and as the owner: same answers, no marker
my $after_su = $node->safe_psql('postgres', $uses);
my $after_owner = $node->safe_psql('postgres', $uses, extra_params => ['-U', 'owner_role']);
is($after_su, $before_su, 'the superuser gets the same answers with the hostile objects present');
is($after_owner, $before_owner, 'the owner gets the same answers with the hostile objects present');

# The insert guard, as superuser and owner, both types, verified and not
for my $user ('postgres', 'owner_role')
{
	my $base = $user eq 'postgres' ? 0 : 100;
	$node->safe_psql('postgres', qq{
		INSERT INTO guarded VALUES ($base + 1, doc(1, 1), minhash_sketch(doc(1, 1)));
		INSERT INTO guarded VALUES ($base + 2, doc(1, 2), minhash_sketch(doc(1, 2)));
		INSERT INTO guarded VALUES ($base + 3, doc(2, 1), minhash_sketch(doc(2, 1)));
		UPDATE guarded SET body = doc(1, 3), sketch = minhash_sketch(doc(1, 3)) WHERE id = $base + 3;
		INSERT INTO guarded_fp VALUES ($base + 1, simhash(doc(1, 1)));
		INSERT INTO guarded_fp VALUES ($base + 2, simhash(doc(1, 2)));
	}, extra_params => ['-U', $user]);
	$node->safe_psql('postgres', 'TRUNCATE guarded, guarded_fp');
}
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/HOSTILE CODE RAN/, 'no hostile function or operator ran for the superuser or the owner');

# The hostile role cannot read, fill, lock or change what ndd owns
for my $sql (
	'SELECT * FROM ndd.ndd_near_duplicate_locks',
	'SELECT relid FROM ndd.ndd_near_duplicate_locks FOR UPDATE',
	'SELECT relid FROM ndd.ndd_near_duplicate_locks FOR KEY SHARE',
	'INSERT INTO ndd.ndd_near_duplicate_locks VALUES (1, 1, 0)',
	'UPDATE ndd.ndd_near_duplicate_locks SET claims = 0',
	'DELETE FROM ndd.ndd_near_duplicate_locks',
	'TRUNCATE ndd.ndd_near_duplicate_locks',
	'BEGIN; LOCK TABLE ndd.ndd_near_duplicate_locks IN ACCESS SHARE MODE; COMMIT',
	'SELECT ndd.ndd_forget_dropped_tables()')
{
	my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => ['-U', 'hostile']);
	like($err, qr/permission denied|can only be called|trigger functions/, "hostile: $sql is refused");
}

# While the hostile role holds whatever it can (its own guarded table with
# the owner's very document in an open transaction, and a try at the token
# table), the owner's guarded inserts do not wait.
$node->safe_psql('postgres', q{
	CREATE TABLE public.mine (id bigint PRIMARY KEY, body text, sketch minhash);
	CREATE TRIGGER guard BEFORE INSERT ON public.mine
		FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8');
}, extra_params => ['-U', 'hostile']);
# the owner's tokens for that document exist already (rows that a stranger
# could lock, were they open to it)
$node->safe_psql('postgres', q{
	INSERT INTO guarded VALUES (999, doc(5, 1), minhash_sketch(doc(5, 1)));
	DELETE FROM guarded WHERE id = 999;}, extra_params => ['-U', 'owner_role']);
my $h = $node->background_psql('postgres', on_error_stop => 0, extra_params => ['-U', 'hostile']);
$h->query_safe('BEGIN');
$h->query_safe('INSERT INTO public.mine VALUES (1, doc(5, 1), minhash_sketch(doc(5, 1)))');
$h->query('SELECT relid FROM ndd.ndd_near_duplicate_locks FOR UPDATE');
my ($ret, $out, $err) = $node->psql('postgres', q{
	SET lock_timeout = '2s';
	INSERT INTO guarded VALUES (1, doc(5, 1), minhash_sketch(doc(5, 1)));
	SELECT count(*) FROM guarded;}, extra_params => ['-U', 'owner_role']);
is($ret, 0, "the owner's insert of the same document does not wait on the hostile role") or diag($err);
is($out, '1', 'and its row is in');
$h->query('ROLLBACK');
$h->quit;

$log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/HOSTILE CODE RAN/, 'still no hostile code ran');

$node->stop;
done_testing();
