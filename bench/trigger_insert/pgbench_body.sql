-- Variant body: the document alone, no sketch (the floor of an insert).
INSERT INTO docs (body) SELECT body FROM staging WHERE id = (SELECT nextval('pick'));
