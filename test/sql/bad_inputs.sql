--
-- The catalogue of bad inputs (README, "Bad inputs"): one bare statement per
-- case, so that the expected output shows each error and its SQLSTATE.
--
\set SHOW_CONTEXT never
CREATE TABLE ok_docs (id bigint PRIMARY KEY, body text, mh minhash, fp simhash, tags text[]);
INSERT INTO ok_docs VALUES (1, 'one two three four five six', minhash_sketch('one two three four five six'),
                            simhash('one two three four five six'::text), ARRAY['a']);

-- minhash values
SELECT 'not a sketch'::minhash;
\echo :SQLSTATE
SELECT '{"v":1,"settings":"num_perm=128"}'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:0123abcd'::minhash;
\echo :SQLSTATE
SELECT minhash_sketch('some text', num_perm => 8);
\echo :SQLSTATE
SELECT minhash_sketch('some text', num_perm => 4096);
\echo :SQLSTATE
SELECT minhash_sketch('some text', shingle_size => 0);
\echo :SQLSTATE
SELECT minhash_sketch('some text', shingle_size => 1000);
\echo :SQLSTATE
SELECT minhash_sketch('some text', unit => 'sentence');
\echo :SQLSTATE
SELECT minhash_sketch(ARRAY['a', NULL]);
\echo :SQLSTATE
SELECT similarity(minhash_sketch('a b c', num_perm => 64), minhash_sketch('a b c'));
\echo :SQLSTATE
SELECT similarity(minhash_sketch('a b c', unit => 'char'), minhash_sketch('a b c'));
\echo :SQLSTATE
SELECT similar(mh, mh, 1.5) FROM ok_docs;
\echo :SQLSTATE
SELECT similar(mh, mh, 'NaN') FROM ok_docs;
\echo :SQLSTATE
SET ndd.similarity_threshold = 1.5;
\echo :SQLSTATE
SELECT minhash_bands(mh, 64, 4) FROM ok_docs;
\echo :SQLSTATE
SELECT minhash_bands(mh, 0, 4) FROM ok_docs;
\echo :SQLSTATE
SELECT lsh_params(0);
\echo :SQLSTATE
SELECT lsh_probability(0.5, 0, 4);
\echo :SQLSTATE

-- exact Jaccard
SELECT jaccard('a b c', 'a b d', shingle_size => -1);
\echo :SQLSTATE
SELECT jaccard(ARRAY[1, NULL]::bigint[], ARRAY[1]::bigint[]);
\echo :SQLSTATE
SELECT show_shingles('a b c', unit => 'line');
\echo :SQLSTATE

-- simhash values
SELECT 'xyz'::simhash;
\echo :SQLSTATE
SELECT '0123456789abcdef0'::simhash;
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0]::float8[]);
\echo :SQLSTATE
SELECT simhash(ARRAY['a', 'b'], ARRAY[1.0, 'NaN']::float8[]);
\echo :SQLSTATE
SELECT simhash(ARRAY[1, NULL]::bigint[]);
\echo :SQLSTATE
SELECT simhash_from_bit(B'101');
\echo :SQLSTATE
SELECT simhash_keys(fp, 7) FROM ok_docs;
\echo :SQLSTATE
SET ndd.hamming_threshold = 65;
\echo :SQLSTATE

-- indexes
CREATE INDEX ON ok_docs USING gin (mh minhash_ops(threshold = 0));
\echo :SQLSTATE
CREATE INDEX ON ok_docs USING gin (mh minhash_ops(bands = 64, rows = 4));
\echo :SQLSTATE
CREATE INDEX ON ok_docs USING gin (mh minhash_ops(bands = 8));
\echo :SQLSTATE
CREATE INDEX ON ok_docs USING gin (mh minhash_ops(unit = 'line'));
\echo :SQLSTATE
CREATE INDEX ok_mh_64 ON ok_docs USING gin (mh minhash_ops(num_perm = 64));
\echo :SQLSTATE
CREATE INDEX ON ok_docs USING gin (fp simhash_ops(max_distance = 20));
\echo :SQLSTATE
-- PostgreSQL's own message, which names the operator class with its schema
-- from 17 on: shown without it
DO $$
BEGIN
    CREATE INDEX ON ok_docs USING gist (fp simhash_ops(max_distance = 20));
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE '%: %', SQLSTATE, replace(SQLERRM, 'public.simhash_ops', 'simhash_ops');
END $$;

-- discovery
SELECT * FROM near_duplicate_pairs('no_such_table', 'mh', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs(NULL, 'mh', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('ok_docs', 'no_such_column', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('ok_docs', 'body', 'id');
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('ok_docs', 'mh', 'id', threshold => 0);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('ok_docs', 'fp', 'id', max_distance => 7);
\echo :SQLSTATE
SELECT * FROM near_duplicate_pairs('ok_docs', 'mh', 'id', verify_column => 'tags');
\echo :SQLSTATE
SELECT * FROM near_duplicate_clusters('ok_docs', 'mh', 'id', representative_order => 'no_such_column');
\echo :SQLSTATE

-- the insert guard
CREATE TRIGGER no_args BEFORE INSERT ON ok_docs FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates();
INSERT INTO ok_docs VALUES (2, 'x', minhash_sketch('x'));
\echo :SQLSTATE
DROP TRIGGER no_args ON ok_docs;
CREATE TRIGGER guard BEFORE INSERT ON ok_docs FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.8');
INSERT INTO ok_docs VALUES (2, 'one two three four five six', minhash_sketch('one two three four five six'));
\echo :SQLSTATE
DROP TRIGGER guard ON ok_docs;
CREATE TRIGGER after_guard AFTER INSERT ON ok_docs FOR EACH STATEMENT EXECUTE FUNCTION ndd_reject_near_duplicates('mh');
INSERT INTO ok_docs VALUES (3, 'x', minhash_sketch('x'));
\echo :SQLSTATE
DROP TRIGGER after_guard ON ok_docs;
CREATE TRIGGER wrong_column BEFORE INSERT ON ok_docs FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('body');
INSERT INTO ok_docs VALUES (4, 'x', minhash_sketch('x'));
\echo :SQLSTATE
DROP TRIGGER wrong_column ON ok_docs;
CREATE TRIGGER bad_mode BEFORE INSERT ON ok_docs FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.8', 'warn');
INSERT INTO ok_docs VALUES (5, 'x', minhash_sketch('x'));
\echo :SQLSTATE
DROP TRIGGER bad_mode ON ok_docs;

-- a near-duplicate under a working guard
CREATE TRIGGER guard BEFORE INSERT ON ok_docs FOR EACH ROW EXECUTE FUNCTION ndd_reject_near_duplicates('mh', '0.95');
INSERT INTO ok_docs VALUES (7, 'one two three four five six', minhash_sketch('one two three four five six'));
\echo :SQLSTATE

DROP TABLE ok_docs;
