--
-- The catalogue of bad inputs (docs/reference.md, "Bad inputs"): one bare
-- statement per case, so that the expected output shows each error and its SQLSTATE.
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
-- a value no sketch function makes.  A weighted sketch holds at every
-- position a rank, a float4 from FLT_MIN to 2^63 / 1e-12: the bits of a
-- negative one gave a containment of -23.28
SELECT containment(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16), 'v1,num_perm=16,unit=weighted_text,shingle_size=1,seed=0:3de425593df7d69e3dcca17c3c7249903d9d37dc3cb7704e3e412f5d3e166efdbdcccccdbdcccccdbdcccccdbdcccccdbdcccccdbdcccccdbdcccccdbdcccccd'::minhash);
\echo :SQLSTATE
-- weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16) is
-- 3de42559 followed by these 15 ranks
\set ranks15 '3df7d69e3dcca17c3c7249903d9d37dc3cb7704e3e412f5d3e166efd3d46ccc43dd8a3653ca299923e23433d3ca04dc93d0bb1ec3ac208ba3decb042'
\set wtext 'v1,num_perm=16,unit=weighted_text,shingle_size=1,seed=0:'
SELECT (:'wtext' || '3de42559' || :'ranks15')::minhash::text
     = weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)::text AS produced;
SELECT (:'wtext' || '00000000' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '80000000' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '7fc00000' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || 'ffffffff' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '7f800000' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || 'ff800000' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '007fffff' || :'ranks15')::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '72e8d4a6' || :'ranks15')::minhash;
\echo :SQLSTATE
-- FLT_MIN and the highest rank are ranks
SELECT (:'wtext' || '00800000' || :'ranks15')::minhash::text = :'wtext' || '00800000' || :'ranks15' AS flt_min,
       (:'wtext' || '72e8d4a5' || :'ranks15')::minhash::text = :'wtext' || '72e8d4a5' || :'ranks15' AS highest;
-- every weighted unit; and no weighted sketch has filled positions
SELECT 'v1,num_perm=16,unit=weighted_word,shingle_size=1,seed=0:3d224c6e3a01e85e3cdd60c23e2cee293c949b6b3dd2a9ea3c437dba3c16d50f3d5927ce3cba26543e034d423a8875ee3d0eb8863c3e0fa83d314a57bd9dd46b'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=weighted_char,shingle_size=2,seed=0:3d4775f83d0bed673dcf39563d90aea83cede1a23c3c245c3d957ac43dd754203dbd9bd23c12a33c3eb6a4d73ce166c93cdeb5b13d6ca1ec3dde66cd00000000'::minhash;
\echo :SQLSTATE
SELECT 'v1,num_perm=16,unit=weighted_bigint,shingle_size=1,seed=0:3d095f833b2ed4753c1483cb3cf49ce43d3774893e208ea53d94ffc93da7d89f3b471f2f3da688d73ced42fd3d9ad5663ce1e5163cff84ba3c38ea297f800000'::minhash;
\echo :SQLSTATE
SELECT (:'wtext' || '3de42559' || :'ranks15' || ':00000001')::minhash;
\echo :SQLSTATE
-- a plain sketch is what densifying its real positions gives: minhash_sketch('a b c', 16,
-- shingle_size => 1) has real positions 9 and 10 only, and fills the others from them
\set plain 'v1,num_perm=16,unit=word,shingle_size=1,seed=0:'
\set first7 '010d6b42010d6b42010d6b423596dec13596dec1010d6b423596dec1'
\set last8 '010d6b423596dec1010d6b42010d6b42010d6b423596dec1010d6b423596dec1:0000fcff'
SELECT (:'plain' || '010d6b42' || :'first7' || :'last8')::minhash::text
     = minhash_sketch('a b c', 16, shingle_size => 1)::text AS produced;
SELECT (:'plain' || '3596dec1' || :'first7' || :'last8')::minhash;
\echo :SQLSTATE
SELECT (:'plain' || '010d6b42' || :'first7' || overlay(:'last8' PLACING 'ffffffff' FROM 1))::minhash;
\echo :SQLSTATE
-- ffffffff marks a bin no element reached: a real position never holds it
SELECT (:'plain' || repeat('00112233', 15) || 'ffffffff')::minhash;
\echo :SQLSTATE
-- binary input checks the same (minhash_recv, through COPY of the bytes of
-- minhash_send with one value or the flags changed): a weighted sketch with
-- a rank -0.1, NaN, 0 or infinity, or with the filled flag and a bitmap; a
-- plain one with a filled value densification would not give, or ffffffff
-- at a real position
CREATE TABLE mh_bytes (id int, raw bytea);
INSERT INTO mh_bytes
SELECT 1, overlay(minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)) PLACING '\xbdcccccd' FROM 11)
UNION ALL SELECT 2, overlay(minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)) PLACING '\x7fc00000' FROM 11)
UNION ALL SELECT 3, overlay(minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)) PLACING '\x00000000' FROM 11)
UNION ALL SELECT 4, overlay(minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)) PLACING '\x7f800000' FROM 11)
UNION ALL SELECT 5, overlay(minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)) PLACING '\x02' FROM 4)
                    || '\x00000001'::bytea
UNION ALL SELECT 6, overlay(minhash_send(minhash_sketch('a b c', 16, shingle_size => 1)) PLACING '\x3596dec1' FROM 11)
UNION ALL SELECT 7, overlay(minhash_send(minhash_sketch('a b c', 16, shingle_size => 1)) PLACING '\xffffffff' FROM 11 + 4 * 8)
UNION ALL SELECT 8, minhash_send(weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16));
CREATE TABLE mh_one (id int, mh minhash);
-- (psql sets no SQLSTATE variable for \copy: the error shows only its code)
\set VERBOSITY sqlstate
\copy (SELECT id, raw FROM mh_bytes WHERE id = 1) TO 'results/minhash_bad1.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad1.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 2) TO 'results/minhash_bad2.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad2.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 3) TO 'results/minhash_bad3.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad3.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 4) TO 'results/minhash_bad4.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad4.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 5) TO 'results/minhash_bad5.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad5.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 6) TO 'results/minhash_bad6.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad6.bin' WITH (FORMAT binary)
\copy (SELECT id, raw FROM mh_bytes WHERE id = 7) TO 'results/minhash_bad7.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_bad7.bin' WITH (FORMAT binary)
\set VERBOSITY default
SELECT count(*) AS nothing_read FROM mh_one;
\copy (SELECT id, raw FROM mh_bytes WHERE id = 8) TO 'results/minhash_good.bin' WITH (FORMAT binary)
\copy mh_one FROM 'results/minhash_good.bin' WITH (FORMAT binary)
SELECT id, mh::text = weighted_minhash_sketch(array['a','b'], array[1,1]::float8[], 16)::text AS same FROM mh_one;
DROP TABLE mh_bytes, mh_one;
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

-- a table argument that names no relation (a regclass of 0, or one dropped):
-- 42P01 naming its OID, never a message about relation "(null)"
SELECT * FROM near_duplicate_pairs(0::regclass, 'mh', 'id', 0.8);
\echo :SQLSTATE
SELECT * FROM near_duplicate_clusters(0::regclass, 'mh', 'id', 0.8);
\echo :SQLSTATE
SELECT * FROM near_duplicate_top_k(0::regclass, 'mh', 'id', minhash_sketch('x'), 3);
\echo :SQLSTATE
SELECT * FROM minhash_index_top_k(0::regclass, 'mh', 'id', minhash_sketch('x'), 3);
\echo :SQLSTATE
SELECT ndd_maintain_clusters(0::regclass, 'mh', 'id', 0.8);
\echo :SQLSTATE
SELECT ndd_cluster_step(0::regclass, 0::regclass, 'mh', 'id', 0.8, NULL, NULL, 1, 2, true);
\echo :SQLSTATE
SELECT * FROM simhash_batch(0::regclass, 0::regclass, 3);
\echo :SQLSTATE
