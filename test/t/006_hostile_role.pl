# A hostile role on a shared server, with only CONNECT and CREATE on a schema
# that is on everybody's search_path, in two setups:
#
#   sep  ndd in a schema of its own; the hostile role creates in "early",
#        before ndd on the search_path, and in "public", after it;
#   pub  ndd installed in public, where the hostile role can create too, so
#        its objects sit beside ndd's own.
#
# It plants, for every function and operator that ndd's generated SQL calls
# (read from the SQL strings of src/**/*.c and sql/ndd.sql, so a new call is
# covered as soon as it is written), overloads on every type a user's column
# may have there: text, varchar, char(n) and a domain over text for a text;
# smallint, integer, bigint and a domain over integer for an id; numeric and
# real for a float8; text for a name, oid for a regclass, integer[] for a
# bigint[].  (A domain over minhash is no sketch column, which the test
# checks, so sketches get no such overloads.)  Where it may (not
# beside ndd, not before it on the path) it also plants copies with ndd's
# exact signatures, and copies of the pg_catalog functions and operators
# ndd's SQL calls.  Each says so in the server log when it runs.
#
# The superuser and a table owner then use every part of ndd that runs SQL,
# on columns of each of those types: none of the hostile code runs (no
# marker reaches the server log), and every answer equals the one given
# before the hostile objects existed.  The hostile role also tries to read,
# fill and lock everything ndd owns, and cannot make the owner's guarded
# inserts wait.
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = abs_path(dirname(__FILE__) . '/../..');

# What ndd's generated SQL calls: %s.name( (ndd's schema, in C's formats and
# the install script's %I), OPERATOR(%s.op), and pg_catalog's.
my (%ndd_functions, %ndd_operators, %pg_functions, %pg_operators);
for my $file (glob("$top/src/*.c"), glob("$top/src/*/*.c"), "$top/sql/ndd.sql")
{
	my $code = slurp_file($file);
	$ndd_functions{$1} = 1 while $code =~ /%(?:\d+\$)?[sI]\.(\w+)\(/g;
	while ($code =~ /OPERATOR\(%(?:\d+\$)?s\.([^)\s]+)\)/g)
	{
		(my $op = $1) =~ s/%%/%/g;
		$ndd_operators{$op} = 1;
	}
	$pg_functions{$1} = 1 while $code =~ /pg_catalog\.(\w+)\(/g;
	$pg_operators{$1} = 1 while $code =~ /OPERATOR\(pg_catalog\.([^)\s]+)\)/g;
}
for my $called ('ndd_shingle_set', 'jaccard', 'similarity', 'ndd_components', 'near_duplicate_pairs',
	'minhash_band_keys', 'simhash_keys', 'containment', 'show_shingles')
{
	ok($ndd_functions{$called}, "the code's SQL is read: it calls $called");
}
ok($ndd_operators{'%'} && $ndd_operators{'@>'} && $pg_operators{'='} && $pg_functions{unnest},
	"and ndd's operators %, @>, and pg_catalog's = and unnest");
note('ndd functions called: ' . join(' ', sort keys %ndd_functions));
note('ndd operators called: ' . join(' ', sort keys %ndd_operators));

# The types a column may have where ndd's SQL takes one of a type (as
# format_type writes them): each class's types replace each other.
my %class_types = (
	text => [ 'text', 'varchar', 'bpchar', 'public.body_dom' ],
	int => [ 'smallint', 'integer', 'bigint', 'public.id_dom' ],
	float => [ 'double precision', 'numeric', 'real' ],
	name => [ 'name', 'text' ],
	regclass => [ 'regclass', 'oid' ],
	keys => [ 'bigint[]', 'integer[]' ],);
my %class_of = (
	text => 'text',
	smallint => 'int',
	integer => 'int',
	bigint => 'int',
	'double precision' => 'float',
	name => 'name',
	regclass => 'regclass',
	'bigint[]' => 'keys');

# The argument lists that differ from @args in the type of one argument, or
# of every argument of one class at once (two columns of one type).
sub variants
{
	my @args = @_;
	my %out;
	for my $i (0 .. $#args)
	{
		my $class = $class_of{ $args[$i] } or next;
		for my $type (@{ $class_types{$class} })
		{
			my @v = @args;
			$v[$i] = $type;
			$out{ join(',', @v) } = 1;
			$out{ join(',', map { ($class_of{$_} // '') eq $class ? $type : $_ } @args) } = 1;
		}
	}
	delete $out{ join(',', @args) };
	return map { [ split /,/ ] } sort keys %out;
}

my $node = PostgreSQL::Test::Cluster->new('hostile');
$node->init;
# jit off: the guard's and live clusters' lookups run with enable_seqscan
# off, which on these small unindexed tables prices them past jit_above_cost
$node->append_conf('postgresql.conf', "log_min_messages = warning\nlock_timeout = '5s'\njit = off");
$node->start;
$node->safe_psql('postgres', q{
	CREATE ROLE owner_role LOGIN;
	CREATE ROLE hostile LOGIN;
});

# The functions of schema $nsp named in $names, one hash each.
sub catalog_functions
{
	my ($db, $nsp, $names) = @_;
	my $list = join(',', sort keys %$names);
	my $rows = $node->safe_psql($db, qq{
		SET search_path = pg_catalog;
		SELECT concat_ws(E'\\t', p.proname, p.prokind, p.pronargs OPERATOR(pg_catalog.-) p.pronargdefaults,
		       p.provariadic OPERATOR(pg_catalog.<>) 0, format_type(p.prorettype, NULL),
		       pg_get_function_result(p.oid),
		       coalesce((SELECT string_agg(format_type(a.t, NULL), ',' ORDER BY a.o)
		                 FROM unnest(p.proargtypes) WITH ORDINALITY a(t, o)), ''),
		       coalesce((SELECT string_agg(format('OUT %s %s', coalesce(a.n, 'o' || a.o), format_type(a.t, NULL)), ', ' ORDER BY a.o)
		                 FROM unnest(p.proallargtypes, p.proargmodes, p.proargnames) WITH ORDINALITY a(t, m, n, o)
		                 WHERE a.m IN ('o', 'b')), ''))
		FROM pg_proc p
		WHERE p.pronamespace OPERATOR(pg_catalog.=) '$nsp'::regnamespace
		  AND p.proname OPERATOR(pg_catalog.=) ANY ('{$list}'::name[])
		ORDER BY 1});
	my @functions;
	for my $row (split /\n/, $rows)
	{
		my %f;
		my $args;
		(@f{qw(name kind min_args variadic rettype result)}, $args, $f{out}) = split /\t/, $row, -1;
		$f{args} = [ length $args ? split(/,/, $args) : () ];
		push @functions, \%f;
	}
	return @functions;
}

# The operators of schema $nsp named in $names, as [name, left, right].
sub catalog_operators
{
	my ($db, $nsp, $names) = @_;
	my $list = join(',', map { qq{"$_"} } sort keys %$names);
	my $rows = $node->safe_psql($db, qq{
		SET search_path = pg_catalog;
		SELECT concat_ws(E'\\t', o.oprname, format_type(o.oprleft, NULL), format_type(o.oprright, NULL))
		FROM pg_operator o
		WHERE o.oprnamespace OPERATOR(pg_catalog.=) '$nsp'::regnamespace AND o.oprleft OPERATOR(pg_catalog.<>) 0
		  AND o.oprname OPERATOR(pg_catalog.=) ANY ('{$list}'::name[])
		ORDER BY 1});
	return map { [ split /\t/ ] } split /\n/, $rows;
}

# A plpgsql body that leaves the marker in the log and returns nothing.
sub marker_body
{
	my ($label, $result, $out) = @_;
	$label =~ s/%/%%/g;
	my $return =
	  ($result =~ /^(SETOF |TABLE\()/ || $out ne '' || $result eq 'void') ? 'RETURN;' : 'RETURN NULL;';
	return "\$\$ BEGIN RAISE WARNING 'HOSTILE CODE RAN: $label as %', current_user; $return END \$\$";
}

my $hostile_seq = 0;

# A hostile function (or aggregate) in $schema like $f, taking @$args.
sub hostile_function
{
	my ($schema, $f, $args) = @_;
	my $label = "$f->{name}(" . join(',', @$args) . ')';
	my $polymorphic = grep { /^any/ } @$args, $f->{rettype};
	if ($f->{kind} eq 'a' && !$polymorphic)
	{
		my $sfunc = "$schema.hostile_sfunc_" . ++$hostile_seq;
		return "CREATE FUNCTION $sfunc(" . join(', ', $f->{rettype}, @$args)
		  . ") RETURNS $f->{rettype} LANGUAGE plpgsql AS " . marker_body($label, $f->{rettype}, '') . ";\n"
		  . "CREATE AGGREGATE $schema.$f->{name}(" . (@$args ? join(', ', @$args) : '*')
		  . ") (SFUNC = $sfunc, STYPE = $f->{rettype});\n";
	}
	my $params = join(', ', @$args, $f->{out} ne '' ? ($f->{out}) : ());
	return "CREATE FUNCTION $schema.$f->{name}($params) RETURNS $f->{result} LANGUAGE plpgsql AS "
	  . marker_body($label, $f->{result}, $f->{out}) . ";\n";
}

# A hostile operator in $schema, through a function of its own.
sub hostile_operator
{
	my ($schema, $op, $left, $right) = @_;
	my $fn = "$schema.hostile_op_" . ++$hostile_seq;
	return "CREATE FUNCTION $fn($left, $right) RETURNS boolean LANGUAGE plpgsql AS "
	  . marker_body("OPERATOR $op($left,$right)", 'boolean', '') . ";\n"
	  . "CREATE OPERATOR $schema.$op (LEFTARG = $left, RIGHTARG = $right, FUNCTION = $fn);\n";
}

# The types the hostile operators with pg_catalog's names take, pairwise.
my @operator_types = (
	'float8', 'float4', 'numeric', 'int2', 'int4', 'int8', 'text', 'varchar', 'bpchar', '"char"',
	'name', 'oid', 'regclass', 'bytea', 'tid', 'boolean', 'jsonb', 'text[]',
	'public.body_dom', 'public.id_dom');
# types a plpgsql function of ours cannot take
my $not_plpgsql = qr/^("any"|internal|cstring|record|anycompatible\w*)$/;

# Everything the hostile role plants in $schema of database $db, ndd being
# in $nsp; $copies: it may also copy ndd's own signatures there.
sub hostile_sql
{
	my ($db, $nsp, $schema, $copies) = @_;
	my $sql = '';
	my %seen;

	# ndd's functions: every arity its defaults allow, on every column type
	my @ndd = catalog_functions($db, $nsp, \%ndd_functions);
	my %own;
	for my $f (@ndd)
	{
		for my $n ($f->{min_args} .. scalar @{ $f->{args} })
		{
			$own{"$f->{name}(" . join(',', @{ $f->{args} }[ 0 .. $n - 1 ]) . ')'} = 1;
		}
	}
	for my $f (@ndd)
	{
		next if $f->{rettype} eq 'internal' || $f->{variadic} eq 't';
		for my $n ($f->{min_args} .. scalar @{ $f->{args} })
		{
			my @args = @{ $f->{args} }[ 0 .. $n - 1 ];
			for my $v (variants(@args), $copies ? (\@args) : ())
			{
				my $sig = "$f->{name}(" . join(',', @$v) . ')';
				# beside ndd's own, the same types would make ndd's calls ambiguous
				next if $seen{$sig}++ || ($own{$sig} && (!$copies || $v != \@args));
				# an aggregate has no defaults: only its whole list
				next if $f->{kind} eq 'a' && $n < scalar @{ $f->{args} };
				$sql .= hostile_function($schema, $f, $v);
			}
		}
	}
	for my $o (catalog_operators($db, $nsp, \%ndd_operators))
	{
		my ($op, $left, $right) = @$o;
		my %own_op = map { ("$_->[1],$_->[2]" => 1) } catalog_operators($db, $nsp, { $op => 1 });
		for my $v (variants($left, $right), $copies ? ([ $left, $right ]) : ())
		{
			my $sig = join(',', @$v);
			next if $seen{"$op($sig)"}++ || ($own_op{$sig} && !$copies);
			$sql .= hostile_operator($schema, $op, @$v);
		}
	}

	# pg_catalog's functions, with their own signatures
	for my $f (catalog_functions($db, 'pg_catalog', \%pg_functions))
	{
		next if $f->{variadic} eq 't';
		next if $f->{rettype} eq 'internal' || grep { /$not_plpgsql/ } @{ $f->{args} };
		my $sig = "$f->{name}(" . join(',', @{ $f->{args} }) . ')';
		next if $seen{$sig}++;
		$sql .= hostile_function($schema, $f, $f->{args});
	}
	# and operators with pg_catalog's names, on every pair of types
	for my $left (@operator_types)
	{
		for my $right (@operator_types)
		{
			my $fn = "$schema.hostile_op_" . ++$hostile_seq;
			$sql .= "CREATE FUNCTION $fn($left, $right) RETURNS boolean LANGUAGE plpgsql AS "
			  . marker_body("an operator on ($left,$right), $fn", 'boolean', '') . ";\n";
			for my $op (sort keys %pg_operators)
			{
				$sql .= "CREATE OPERATOR $schema.$op (LEFTARG = $left, RIGHTARG = $right, FUNCTION = $fn);\n";
			}
		}
	}
	return $sql;
}

# The owner's tables, in database $db where ndd is in $nsp: columns of every
# type ndd takes a text or an id of, guarded tables, tables to maintain.
sub owner_tables
{
	my ($db, $nsp) = @_;
	$node->safe_psql($db, qq{
		SET search_path = public, $nsp;
		CREATE FUNCTION public.doc(family int, member int) RETURNS text LANGUAGE sql IMMUTABLE AS \$\$
			SELECT (SELECT pg_catalog.string_agg('f' || family || 'w' || g, ' ') FROM pg_catalog.generate_series(1, 60) g)
			    || CASE WHEN member > 1 THEN ' extra' || member ELSE '' END \$\$;
		CREATE DOMAIN public.body_dom AS text;
		CREATE DOMAIN public.id_dom AS integer;
		CREATE DOMAIN public.minhash_dom AS $nsp.minhash;

		CREATE TABLE public.docs (id bigint PRIMARY KEY, body text, sketch minhash, fp simhash);
		INSERT INTO docs
		SELECT f * 10 + m, doc(f, m), minhash_sketch(doc(f, m)), simhash(doc(f, m))
		FROM generate_series(1, 12) f, generate_series(1, 5) m;
		CREATE INDEX docs_sketch ON docs USING gin (sketch minhash_ops);
		CREATE INDEX docs_fp ON docs USING gin (fp simhash_ops);
		CREATE INDEX docs_fp_gist ON docs USING gist (fp simhash_knn_ops);

		-- one column of every text and id type
		CREATE TABLE public.multi (id8 bigint PRIMARY KEY, id4 integer NOT NULL UNIQUE,
			id2 smallint NOT NULL UNIQUE, idd id_dom NOT NULL UNIQUE,
			b_text text, b_varchar varchar, b_char char(700), b_dom body_dom,
			sketch minhash, fp simhash, sketch_dom minhash_dom);
		INSERT INTO multi
		SELECT f * 10 + m, f * 10 + m, f * 10 + m, f * 10 + m, doc(f, m), doc(f, m), doc(f, m), doc(f, m),
		       minhash_sketch(doc(f, m)), simhash(doc(f, m)), minhash_sketch(doc(f, m))
		FROM generate_series(1, 12) f, generate_series(1, 5) m;
		CREATE INDEX ON multi USING gin (sketch minhash_ops);
		CREATE INDEX ON multi USING gin (b_varchar containment_ops);
		CREATE INDEX ON multi USING gin (b_dom containment_ops);

		-- the insert guard: verified with each text type, minhash and simhash
		CREATE TABLE public.guarded (id bigint PRIMARY KEY, body text, sketch minhash);
		CREATE TABLE public.guarded_varchar (id smallint PRIMARY KEY, body varchar, sketch minhash);
		CREATE TABLE public.guarded_char (id integer PRIMARY KEY, body char(700), sketch minhash);
		CREATE TABLE public.guarded_dom (id id_dom PRIMARY KEY, body body_dom, sketch minhash);
		CREATE TABLE public.guarded_fp (id bigint PRIMARY KEY, body varchar, fp simhash);
		CREATE TABLE public.guarded_rows (id integer PRIMARY KEY, sketch minhash);
	});
	for my $t ('guarded', 'guarded_varchar', 'guarded_char', 'guarded_dom')
	{
		# verified at 0.8: candidates from 3 standard deviations lower, 0.69
		$node->safe_psql($db, qq{
			SET search_path = public, $nsp;
			CREATE INDEX ON $t USING gin (sketch minhash_ops(threshold = 0.69)) WITH (fastupdate = off);
			CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON $t
				FOR EACH ROW EXECUTE FUNCTION $nsp.ndd_reject_near_duplicates('sketch', '0.8', 'skip', 'body');
		});
	}
	$node->safe_psql($db, qq{
		SET search_path = public, $nsp;
		CREATE TRIGGER guard BEFORE INSERT OR UPDATE ON guarded_fp
			FOR EACH ROW EXECUTE FUNCTION $nsp.ndd_reject_near_duplicates('fp', '3', 'skip', 'body');
		CREATE TRIGGER guard AFTER INSERT ON guarded_rows REFERENCING NEW TABLE AS new_rows
			FOR EACH STATEMENT EXECUTE FUNCTION $nsp.ndd_reject_near_duplicates('sketch', '0.8');
	});
	# tables to maintain clusters of, one per id type
	my %live = (smallint => 'varchar', integer => 'char(700)', bigint => 'text', id_dom => 'body_dom');
	for my $id (sort keys %live)
	{
		$node->safe_psql($db, qq{
			SET search_path = public, $nsp;
			CREATE TABLE public.live_$id (id $id PRIMARY KEY, body $live{$id}, sketch minhash, fp simhash);
			INSERT INTO live_$id SELECT f * 10 + m, doc(f, m), minhash_sketch(doc(f, m)), simhash(doc(f, m))
			FROM generate_series(1, 12) f, generate_series(1, 3) m;
		});
	}
	for my $t ('docs', 'multi', 'guarded', 'guarded_varchar', 'guarded_char', 'guarded_dom', 'guarded_fp',
		'guarded_rows', map { "live_$_" } sort keys %live)
	{
		$node->safe_psql($db, "ALTER TABLE public.$t OWNER TO owner_role");
	}
	$node->safe_psql($db, q{
		ALTER FUNCTION public.doc(int, int) OWNER TO owner_role;
		ALTER DOMAIN public.body_dom OWNER TO owner_role;
		ALTER DOMAIN public.id_dom OWNER TO owner_role;
		ALTER DOMAIN public.minhash_dom OWNER TO owner_role;
	});
}

# Everything a user does with ndd, as one script; its output must not
# change.  The user's own calls take ndd's exact types, or name their
# arguments, and its own comparisons of a domain name pg_catalog's operator:
# an unqualified call of its own with a looser type is the caller's to guard,
# not ndd's.
my $uses = q{
	\pset tuples_only on
	SET extra_float_digits = 0;
	-- discovery, both types, with and without verification
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6), p.distance FROM near_duplicate_pairs(tbl => 'docs', sketch_column => 'sketch', id_column => 'id') p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs(tbl => 'docs', sketch_column => 'sketch', id_column => 'id', threshold => 0.85, verify_column => 'body') p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, p.distance FROM near_duplicate_pairs(tbl => 'docs', sketch_column => 'fp', id_column => 'id', max_distance => 4) p ORDER BY 1, 2;
	SELECT pg_catalog.count(*) FROM near_duplicate_pairs(tbl => 'docs', sketch_column => 'sketch', id_column => 'id', progress => true) p;
	-- clusters
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters(tbl => 'docs', sketch_column => 'sketch', id_column => 'id') c ORDER BY 1;
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters(tbl => 'docs', sketch_column => 'sketch', id_column => 'id', representative_order => 'pg_catalog.length(body) DESC') c ORDER BY 1;
	-- lookups: %, <->, similar(), minhash_query; simhash % and <->
	SET enable_seqscan = off;
	SELECT d.id FROM docs d WHERE d.sketch % minhash_sketch(doc(3, 1)) ORDER BY 1;
	SELECT d.id FROM docs d WHERE similar(d.sketch, minhash_sketch(doc(3, 1)), 0.9::float8) ORDER BY 1;
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
	       (SELECT ndd_colliding_keys(minhash_band_keys(d.sketch, 32, 4), 1000::bigint) FROM docs d), 1));
	SELECT simhash_keys(simhash(doc(1, 1))), hamming_distance(simhash(doc(1, 1)), simhash(doc(1, 2))),
	       round(simhash_cosine(simhash(doc(1, 1)), simhash(doc(1, 2)))::numeric, 6);
	SELECT simhash(ARRAY['a', 'b']), simhash(ARRAY[1, 2]::bigint[]), simhash(ARRAY['a', 'b'], ARRAY[1.0, 2.0]::float8[]);
	SELECT simhash(doc(1, 1))::bigint, simhash(doc(1, 1))::bit(64)::simhash;
	SELECT minhash_sketch(ARRAY['a', 'b'])::text, minhash_sketch(ARRAY[1, 2]::bigint[])::text;
	-- I-Match, SpotSigs, ndd_explain
	SELECT imatch_signature(doc(1, 1), (SELECT imatch_lexicon(d.body) FROM docs d), 0.5) = imatch_signature(doc(1, 2), (SELECT imatch_lexicon(d.body) FROM docs d), 0.5);
	SELECT spotsigs_similarity(spotsigs('there is a rose in the garden'), spotsigs('there was a rose in the garden'), 0.1);
	SELECT e.jaccard, e.shingles_a, e.shared, e.total, e.shared_sample, e.only_a_sample, e.only_b_sample FROM ndd_explain(doc(1, 1), doc(1, 2), sample => 2) e;
	-- simhash_batch
	SELECT b.query_id, b.target_id, b.distance FROM simhash_batch(queries => 'docs', targets => 'docs', max_distance => 4, id_column => 'id') b ORDER BY 1, 2 LIMIT 5;
	-- a domain over minhash is not a sketch column
	\set ON_ERROR_STOP off
	SELECT pg_catalog.count(*) FROM near_duplicate_pairs(tbl => 'multi', sketch_column => 'sketch_dom', id_column => 'id8');
	\echo :SQLSTATE
	\set ON_ERROR_STOP on
};

# the same, on columns of each text and id type
my @texts = ('b_text', 'b_varchar', 'b_char', 'b_dom');
my @ids = ('id8', 'id4', 'id2', 'idd');
for my $i (0 .. 3)
{
	my ($text, $id, $other_id) = ($texts[$i], $ids[$i], $ids[ ($i + 1) % 4 ]);
	$uses .= qq{
	-- verify column $text, ids $id and $other_id
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs(tbl => 'multi', sketch_column => 'sketch', id_column => '$id', threshold => 0.8, verify_column => '$text') p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6), p.distance FROM near_duplicate_pairs(tbl => 'multi', sketch_column => 'fp', id_column => '$other_id', threshold => 0.8, verify_column => '$text', max_distance => 4) p ORDER BY 1, 2;
	SELECT p.id_a, p.id_b, round(p.similarity::numeric, 6) FROM near_duplicate_pairs(tbl => 'multi', sketch_column => 'sketch', id_column => '$id', threshold => 0.9) p ORDER BY 1, 2;
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters(tbl => 'multi', sketch_column => 'sketch', id_column => '$id', threshold => 0.8, verify_column => '$text') c ORDER BY 1;
	SELECT c.id, c.cluster_id FROM near_duplicate_clusters(tbl => 'multi', sketch_column => 'fp', id_column => '$other_id', verify_column => '$text', max_distance => 4, representative_order => 'pg_catalog.length($text) DESC') c ORDER BY 1;
	SELECT k.id, round(k.similarity::numeric, 6) FROM near_duplicate_top_k(tbl => 'multi', sketch_column => 'sketch', id_column => '$id', query => minhash_sketch(doc(3, 1)), k => 7) k ORDER BY 1;
};
}
$uses .= q{
	-- contamination: items and documents of every text type
	SELECT c.item_id, c.doc_id, round(c.containment::numeric, 6) FROM contamination_pairs(items => 'multi', item_column => 'b_char', item_id_column => 'id2', docs => 'multi', doc_column => 'b_varchar', doc_id_column => 'idd', threshold => 0.9) c ORDER BY 1, 2;
	SELECT pg_catalog.count(*) FROM contamination_pairs(items => 'multi', item_column => 'b_varchar', item_id_column => 'idd', docs => 'multi', doc_column => 'b_dom', doc_id_column => 'id4', threshold => 0.9) c;
};
# the insert guard, verified with each text type (the rows are skipped)
for my $t ('guarded', 'guarded_varchar', 'guarded_char', 'guarded_dom')
{
	$uses .= qq{
	BEGIN;
	INSERT INTO $t VALUES (1, doc(1, 1), minhash_sketch(doc(1, 1)));
	INSERT INTO $t VALUES (2, doc(1, 2), minhash_sketch(doc(1, 2)));
	INSERT INTO $t VALUES (3, doc(2, 1), minhash_sketch(doc(2, 1)));
	UPDATE $t SET body = doc(1, 3), sketch = minhash_sketch(doc(1, 3)) WHERE id OPERATOR(pg_catalog.=) 3;
	SELECT g.id, pg_catalog.length(g.body) FROM $t g ORDER BY 1;
	ROLLBACK;
};
}
$uses .= q{
	BEGIN;
	INSERT INTO guarded_fp VALUES (1, doc(1, 1), simhash(doc(1, 1)));
	INSERT INTO guarded_fp VALUES (2, doc(1, 2), simhash(doc(1, 2)));
	INSERT INTO guarded_fp VALUES (3, doc(2, 1), simhash(doc(2, 1)));
	SELECT g.id FROM guarded_fp g ORDER BY 1;
	ROLLBACK;
	-- the guard fired for each statement
	BEGIN;
	INSERT INTO guarded_rows SELECT f, minhash_sketch(doc(f, 1)) FROM generate_series(1, 6) f;
	SAVEPOINT s;
	\set ON_ERROR_STOP off
	INSERT INTO guarded_rows SELECT 10 + f, minhash_sketch(doc(f, 2)) FROM generate_series(1, 2) f;
	\echo :SQLSTATE
	ROLLBACK TO s;
	INSERT INTO guarded_rows SELECT 10 + f, minhash_sketch(doc(7, f)) FROM generate_series(1, 2) f;
	\echo :SQLSTATE
	\set ON_ERROR_STOP on
	ROLLBACK TO s;
	SELECT pg_catalog.count(*) FROM guarded_rows;
	ROLLBACK;
};
# maintained clusters, one table per id type; rolled back, to run again
for my $id ('smallint', 'integer', 'bigint', 'id_dom')
{
	my $rule =
	  $id eq 'integer'
	  ? "sketch_column => 'fp', id_column => 'id', max_distance => 4"
	  : "sketch_column => 'sketch', id_column => 'id', threshold => 0.8";
	# as the owner: the triggers run as the table's owner, who must be able to
	# update the cluster table the caller creates
	$uses .= qq{
	BEGIN;
	SET LOCAL ROLE owner_role;
	SELECT ndd_maintain_clusters(tbl => 'live_$id', $rule, representative_order => 'pg_catalog.length(body) DESC')::text;
	INSERT INTO live_$id VALUES (100, doc(2, 9), minhash_sketch(doc(2, 9)), simhash(doc(2, 9)));
	UPDATE live_$id SET body = doc(3, 8), sketch = minhash_sketch(doc(3, 8)), fp = simhash(doc(3, 8)) WHERE id OPERATOR(pg_catalog.=) 11;
	DELETE FROM live_$id WHERE id OPERATOR(pg_catalog.=) 21;
	SELECT c.id, c.cluster_id FROM live_${id}_clusters c ORDER BY 1;
	TRUNCATE live_$id;
	SELECT pg_catalog.count(*) FROM live_${id}_clusters;
	ROLLBACK;
};
}

# The hostile functions that ran since offset, by their markers.
sub hostile_ran
{
	my ($offset) = @_;
	my $log = slurp_file($node->logfile, $offset);
	my %ran;
	$ran{$1}++ while $log =~ /HOSTILE CODE RAN: (.*?) as \w+/g;
	return join("\n", sort keys %ran);
}

# One setup: database $db with ndd in $nsp; the hostile role plants in
# @$schemas, each [schema, whether it may copy ndd's exact signatures].
sub hostile_setup
{
	my ($db, $nsp, $path, $schemas) = @_;

	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
		CREATE SCHEMA IF NOT EXISTS $nsp;
		CREATE EXTENSION ndd SCHEMA $nsp;
		CREATE SCHEMA early AUTHORIZATION hostile;
		GRANT USAGE ON SCHEMA early TO PUBLIC;
		GRANT CREATE ON SCHEMA public TO hostile, owner_role;
		GRANT USAGE ON SCHEMA $nsp TO owner_role, hostile;
		ALTER ROLE postgres IN DATABASE $db SET search_path = $path;
		ALTER ROLE owner_role IN DATABASE $db SET search_path = $path;
		ALTER ROLE hostile IN DATABASE $db SET search_path = $path;
	});
	owner_tables($db, $nsp);

	my ($ret, $before_su, $err) = $node->psql($db, $uses);
	is($ret, 0, "$db: the uses run") or diag($err);
	like($before_su, qr/\S/, "$db: the uses give answers");
	like($before_su, qr/^42804$/m, "$db: a domain over minhash is not taken as a sketch column");
	my (undef, $before_owner) = $node->psql($db, $uses, extra_params => [ '-U', 'owner_role' ]);

	my $planted = 0;
	for my $s (@$schemas)
	{
		my ($schema, $copies) = @$s;
		my $sql = hostile_sql($db, $nsp, $schema, $copies);
		$planted += () = $sql =~ /^CREATE /mg;
		$node->safe_psql($db, $sql, extra_params => [ '-U', 'hostile' ]);
	}
	note("$db: the hostile role planted $planted functions, aggregates and operators (with their support functions)");
	# among them, those of the report
	for my $s (@$schemas)
	{
		for my $sig ('ndd_shingle_set(varchar, integer, text)', 'jaccard(varchar, text, integer, text)',
			'jaccard(bpchar, text, integer, text)', 'jaccard(body_dom, text, integer, text)',
			'ndd_components(integer, integer)')
		{
			is($node->safe_psql($db, "SELECT pg_get_userbyid(p.proowner) FROM pg_proc p WHERE p.oid = to_regprocedure('$s->[0].$sig')"),
				'hostile', "$db: the hostile role planted $s->[0].$sig");
		}
	}
	my $count = $node->safe_psql($db,
		q{SELECT count(*) FROM pg_proc p WHERE p.proowner = 'hostile'::regrole});
	cmp_ok($count, '>', 500, "$db: the hostile role defined $count functions");

	# the marker reaches the log: the hostile role's own use runs its code
	for my $s (@$schemas)
	{
		$node->psql($db, "SELECT $s->[0].ndd_shingle_set('a b c'::varchar, 5, 'word'::text)",
			extra_params => [ '-U', 'hostile' ]);
	}
	ok($node->wait_for_log(qr/HOSTILE CODE RAN: ndd_shingle_set\(varchar,integer,text\) as hostile/),
		"$db: a hostile function called directly does log its marker");
	my $log_offset = -s $node->logfile;

	# The same uses, as the superuser and as the owner: same answers, no marker
	my ($ret_su, $after_su, $err_su) = $node->psql($db, $uses);
	my ($ret_owner, $after_owner, $err_owner) = $node->psql($db, $uses, extra_params => [ '-U', 'owner_role' ]);
	is($ret_su, 0, "$db: the superuser's uses run with the hostile objects present") or diag($err_su);
	is($ret_owner, 0, "$db: the owner's uses run with the hostile objects present") or diag($err_owner);
	is($after_su, $before_su, "$db: the superuser gets the same answers with the hostile objects present");
	is($after_owner, $before_owner, "$db: the owner gets the same answers with the hostile objects present");
	is(hostile_ran($log_offset), '', "$db: no hostile function or operator ran for the superuser or the owner");

	# The hostile role cannot read, fill, lock or change what ndd owns
	for my $sql (
		"SELECT * FROM $nsp.ndd_near_duplicate_locks",
		"SELECT relid FROM $nsp.ndd_near_duplicate_locks FOR UPDATE",
		"SELECT relid FROM $nsp.ndd_near_duplicate_locks FOR KEY SHARE",
		"INSERT INTO $nsp.ndd_near_duplicate_locks VALUES (1, 1, 0)",
		"UPDATE $nsp.ndd_near_duplicate_locks SET claims = 0",
		"DELETE FROM $nsp.ndd_near_duplicate_locks",
		"TRUNCATE $nsp.ndd_near_duplicate_locks",
		"BEGIN; LOCK TABLE $nsp.ndd_near_duplicate_locks IN ACCESS SHARE MODE; COMMIT",
		"SELECT $nsp.ndd_forget_dropped_tables()")
	{
		my ($ret, $out, $err) = $node->psql($db, $sql, extra_params => [ '-U', 'hostile' ]);
		like($err, qr/permission denied|can only be called|trigger functions/, "$db: hostile: $sql is refused");
	}

	# While the hostile role holds whatever it can (its own guarded table with
	# the owner's very document in an open transaction, and a try at the token
	# table), the owner's guarded inserts do not wait.
	$node->safe_psql($db, qq{
		CREATE TABLE public.mine (id bigint PRIMARY KEY, body text, sketch $nsp.minhash);
		CREATE TRIGGER guard BEFORE INSERT ON public.mine
			FOR EACH ROW EXECUTE FUNCTION $nsp.ndd_reject_near_duplicates('sketch', '0.8');
	}, extra_params => [ '-U', 'hostile' ]);
	# the owner's tokens for that document exist already (rows that a stranger
	# could lock, were they open to it)
	$node->safe_psql($db, q{
		INSERT INTO guarded VALUES (999, doc(5, 1), minhash_sketch(doc(5, 1)));
		DELETE FROM guarded WHERE id = 999;}, extra_params => [ '-U', 'owner_role' ]);
	my $h = $node->background_psql($db, on_error_stop => 0, extra_params => [ '-U', 'hostile' ]);
	$h->query_safe('BEGIN');
	$h->query_safe('INSERT INTO public.mine VALUES (1, public.doc(5, 1), minhash_sketch(public.doc(5, 1)))');
	$h->query("SELECT relid FROM $nsp.ndd_near_duplicate_locks FOR UPDATE");
	my ($ret_wait, $out, $err_wait) = $node->psql($db, q{
		SET lock_timeout = '2s';
		INSERT INTO guarded VALUES (1, doc(5, 1), minhash_sketch(doc(5, 1)));
		SELECT count(*) FROM guarded;}, extra_params => [ '-U', 'owner_role' ]);
	is($ret_wait, 0, "$db: the owner's insert of the same document does not wait on the hostile role")
	  or diag($err_wait);
	is($out, '1', "$db: and its row is in");
	$h->query('ROLLBACK');
	$h->quit;

	is(hostile_ran($log_offset), '', "$db: still no hostile code ran");
}

# ndd in a schema of its own, the hostile role's schemas before and after it
hostile_setup('sep', 'ndd', 'early, ndd, public', [ [ 'early', 0 ], [ 'public', 1 ] ]);
# ndd in public, where the hostile role creates too
hostile_setup('pub', 'public', 'public', [ [ 'public', 0 ] ]);

$node->stop;
done_testing();
