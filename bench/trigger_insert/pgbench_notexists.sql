-- Variant notexists: the trigger's lookup written in SQL, with the index and
-- no trigger.  It claims no tokens, so concurrent near-duplicates can both
-- get in: it shows what the lookup costs, not a safe alternative.
-- MATERIALIZED: sketch once, not once per reference.
WITH s AS MATERIALIZED (
	SELECT body, minhash_sketch(body) AS mh FROM staging WHERE id = (SELECT nextval('pick'))
)
INSERT INTO docs (body, mh)
SELECT body, mh FROM s
WHERE NOT EXISTS (SELECT FROM docs d WHERE d.mh % ROW(s.mh, :threshold)::minhash_query);
