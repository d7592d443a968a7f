-- The soak test's schema and its deterministic documents (test/t/013_soak.pl).
-- Every document is soak_doc(fam, var): variant var of family fam, 40 words
-- drawn from a vocabulary of 20,000 by a hash.  Variant 0 is the family's
-- base; another variant has its last d words replaced, d from 0 to 5 by a
-- hash, so that its 36 shingles of 5 words keep a Jaccard resemblance of
-- (36 - d) / (36 + d) with the base: 1, 0.95, 0.89, 0.85, 0.8 or 0.76.
CREATE EXTENSION ndd;
CREATE EXTENSION IF NOT EXISTS amcheck;

CREATE FUNCTION soak_uniform(key bigint, stream bigint) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT (hashint8extended(key, stream) & 4503599627370495)::float8 / 4503599627370496 $$;

CREATE FUNCTION soak_doc(fam bigint, var bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
	SELECT string_agg(CASE WHEN var <> 0 AND i > 40 - floor(soak_uniform(fam, var) * 6)
	                       THEN 'x' || floor(soak_uniform(fam * 100 + i, var) * 20000)::int
	                       ELSE 'w' || floor(soak_uniform(fam * 100 + i, 0) * 20000)::int END,
	                  ' ' ORDER BY i)
	FROM generate_series(1, 40) i $$;

-- the family and variant of preloaded row i of docs: every other group of
-- four rows is the variants 0 to 3 of family (i - 1) / 4, the others are
-- bases of families of their own (013_soak.pl's preload_state says the same)
CREATE FUNCTION soak_fam(i bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN (i - 1) / 4 % 2 = 0 THEN (i - 1) / 4 ELSE 1000000000 + i END $$;
CREATE FUNCTION soak_var(i bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN (i - 1) / 4 % 2 = 0 THEN (i - 1) % 4 ELSE 0 END $$;

-- words from .. from + len - 1 of family fam's base: a passage that every
-- variant of the family holds whole when from + len - 1 <= 35
CREATE FUNCTION soak_passage(fam bigint, "from" int, len int) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
	SELECT string_agg('w' || floor(soak_uniform(fam * 100 + i, 0) * 20000)::int, ' ' ORDER BY i)
	FROM generate_series("from", "from" + len - 1) i $$;
