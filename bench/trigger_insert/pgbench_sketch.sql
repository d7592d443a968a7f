-- Variants sketch, index and trigger: the document and its sketch.  The
-- variants differ only in what docs has: no index, the GIN index, the
-- index and the trigger.
INSERT INTO docs (body, mh) SELECT body, minhash_sketch(body) FROM staging WHERE id = (SELECT nextval('pick'));
