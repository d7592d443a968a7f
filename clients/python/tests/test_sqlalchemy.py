"""SQLAlchemy: column types, comparators, and gin_index() whose index
answers exactly what a sequential scan answers."""

import random

import pytest

import ndd
from corpus import document, documents, near_copy

sa = pytest.importorskip('sqlalchemy')
pytest.importorskip('psycopg2')
orm = pytest.importorskip('sqlalchemy.orm')

from ndd.sqlalchemy import MinHash, MinHashBbit, SimHash, gin_index, minhash_ops  # noqa: E402

Base = orm.declarative_base()


class Doc(Base):
    __tablename__ = 'ndd_sa_docs'
    id = sa.Column(sa.BigInteger, primary_key=True, autoincrement=False)
    body = sa.Column(sa.Text, nullable=False)
    sketch = sa.Column(MinHash)
    sketch4 = sa.Column(MinHashBbit)
    fp = sa.Column(SimHash)
    __table_args__ = (
        gin_index('ndd_sa_docs_sketch_idx', 'sketch', 'minhash_ops', threshold=0.7, shingle_size=2,
                  fastupdate=False),
        gin_index('ndd_sa_docs_fp_idx', 'fp', 'simhash_ops', max_distance=4),
    )


@pytest.fixture
def session(ndd_database):
    engine = sa.create_engine('postgresql+psycopg2://')
    with engine.connect() as connection:
        transaction = connection.begin()
        Base.metadata.create_all(connection)
        with orm.Session(bind=connection) as session:
            yield session
        transaction.rollback()
    engine.dispose()


def load(session, docs):
    """Docs with sketches made by the server, read back as Python values."""
    session.execute(sa.text(
        'INSERT INTO ndd_sa_docs (id, body, sketch, sketch4, fp) '
        'SELECT n, d, minhash_sketch(d, shingle_size => 2), minhash_bbit(minhash_sketch(d, shingle_size => 2)), '
        'simhash(d, shingle_size => 1) FROM unnest(CAST(:docs AS text[])) WITH ORDINALITY AS t(d, n)'),
        {'docs': docs})
    return {d.id: d for d in session.execute(sa.select(Doc)).scalars()}


def corpus(seed=30, originals=60):
    rng = random.Random(seed)
    docs = [document(rng, rng.randint(20, 40)) for _ in range(originals)]
    return docs + [near_copy(rng, rng.choice(docs), rng.randrange(4)) for _ in range(originals)]


def explain(session, statement):
    compiled = statement.compile(session.bind, compile_kwargs={'literal_binds': True})
    # the compiled text keeps psycopg2's %% escapes, which an empty parameter tuple undoes
    result = session.connection().exec_driver_sql('EXPLAIN (COSTS OFF) ' + str(compiled), ())
    return '\n'.join(r[0] for r in result)


def test_ddl(session):
    indexes = {str(sa.schema.CreateIndex(i).compile(session.bind)) for i in Doc.__table__.indexes}
    assert indexes == {
        'CREATE INDEX ndd_sa_docs_sketch_idx ON ndd_sa_docs USING gin (sketch minhash_ops(threshold = 0.7, shingle_size = 2)) '
        'WITH (fastupdate = off)',
        'CREATE INDEX ndd_sa_docs_fp_idx ON ndd_sa_docs USING gin (fp simhash_ops(max_distance = 4))'}
    assert minhash_ops(unit='text', key_bits=16) == "minhash_ops(unit = 'text', key_bits = 16)"
    other = sa.Table('other', sa.MetaData(), sa.Column('fp', SimHash), sa.Column('Odd "name"', MinHash))
    assert str(sa.schema.CreateIndex(gin_index('i', other.c.fp)).compile(session.bind)) == \
        'CREATE INDEX i ON other USING gin (fp simhash_ops)'
    odd = gin_index('j', other.c['Odd "name"'], seed=-1)
    assert str(sa.schema.CreateIndex(odd).compile(session.bind)) == \
        'CREATE INDEX j ON other USING gin ("Odd ""name""" minhash_ops(seed = -1))'
    with pytest.raises(TypeError):
        gin_index('i', 'sketch')


@pytest.mark.parametrize('bad', [dict(threshold='0.8) WITH (x'), dict(unit="word'; DROP"),
                                 dict(nonsense=1), dict(bands=2.5), dict(threshold=True)])
def test_options_are_checked(bad):
    with pytest.raises((TypeError, ValueError)):
        minhash_ops(**bad)


def test_values_round_trip(session):
    rows = load(session, documents(31, 30))
    for doc in rows.values():
        assert isinstance(doc.sketch, ndd.MinHash) and isinstance(doc.fp, ndd.SimHash)
        # back through a parameter: the server sees the same value
        same = session.execute(sa.select(
            sa.cast(sa.literal(doc.sketch, MinHash()), sa.Text) == sa.cast(Doc.sketch, sa.Text),
            sa.cast(sa.literal(doc.sketch4, MinHashBbit()), sa.Text) == sa.cast(Doc.sketch4, sa.Text),
            sa.literal(doc.fp, SimHash()) == Doc.fp).where(Doc.id == doc.id)).one()
        assert same == (True, True, True)
    session.add(Doc(id=1000, body='nothing sketched'))
    session.flush()
    assert session.execute(sa.select(Doc.sketch, Doc.fp).where(Doc.id == 1000)).one() == (None, None)


def test_scores_equal_python(session):
    rows = load(session, corpus())
    query = rows[61]
    result = session.execute(sa.select(
        Doc.id, Doc.sketch.similarity(query.sketch), Doc.sketch.distance(query.sketch),
        Doc.sketch4.similarity(query.sketch4), Doc.fp.hamming_distance(query.fp),
        Doc.fp.distance(query.fp))).all()
    assert len(result) == len(rows)
    for id_, similarity, distance, similarity4, hamming, hamming_op in result:
        doc = rows[id_]
        assert similarity == doc.sketch.similarity(query.sketch)
        assert distance == 1.0 - similarity
        assert similarity4 == doc.sketch4.similarity(query.sketch4)
        assert hamming == hamming_op == doc.fp.hamming_distance(query.fp)


def seq_scan(session):
    session.execute(sa.text('SET LOCAL enable_indexscan = off'))
    session.execute(sa.text('SET LOCAL enable_bitmapscan = off'))
    session.execute(sa.text('SET LOCAL ndd.lookup_scan = off'))


def index_scan(session):
    session.execute(sa.text('SET LOCAL enable_seqscan = off'))
    session.execute(sa.text('RESET enable_indexscan'))
    session.execute(sa.text('RESET enable_bitmapscan'))
    session.execute(sa.text('RESET ndd.lookup_scan'))


@pytest.mark.parametrize('threshold', [None, 0.7, 0.9])
def test_minhash_index_equals_seq_scan(session, threshold):
    rows = load(session, corpus())
    session.execute(sa.text('ANALYZE ndd_sa_docs'))
    session.execute(sa.text('SET LOCAL ndd.similarity_threshold = 0.75'))
    expected_threshold = 0.75 if threshold is None else threshold
    for query_id in (1, 61, 70, 100, 119):
        query = rows[query_id].sketch
        statement = sa.select(Doc.id).where(Doc.sketch.similar(query, threshold))
        index_scan(session)
        plan = explain(session, statement)
        assert 'ndd_sa_docs_sketch_idx' in plan, plan
        by_index = sorted(session.execute(statement).scalars())
        seq_scan(session)
        assert 'Seq Scan' in explain(session, statement)
        by_scan = sorted(session.execute(statement).scalars())
        in_python = sorted(i for i, d in rows.items() if d.sketch.similarity(query) >= expected_threshold)
        assert by_index == by_scan == in_python
        assert query_id in by_index


@pytest.mark.parametrize('max_distance', [None, 2, 4])
def test_simhash_index_equals_seq_scan(session, max_distance):
    rows = load(session, corpus())
    session.execute(sa.text('ANALYZE ndd_sa_docs'))
    session.execute(sa.text('SET LOCAL ndd.hamming_threshold = 3'))
    expected = 3 if max_distance is None else max_distance
    found_any = False
    for query_id in (1, 61, 70, 100, 119):
        query = rows[query_id].fp
        statement = sa.select(Doc.id).where(Doc.fp.similar(query, max_distance))
        index_scan(session)
        assert 'ndd_sa_docs_fp_idx' in explain(session, statement)
        by_index = sorted(session.execute(statement).scalars())
        seq_scan(session)
        by_scan = sorted(session.execute(statement).scalars())
        in_python = sorted(i for i, d in rows.items() if d.fp.hamming_distance(query) <= expected)
        assert by_index == by_scan == in_python
        found_any |= len(by_index) > 1
    assert found_any


def test_nearest_by_distance(session):
    rows = load(session, corpus())
    query = rows[70].sketch
    nearest = session.execute(sa.select(Doc.id).order_by(Doc.sketch.distance(query), Doc.id).limit(5)).scalars().all()
    assert nearest == sorted(rows, key=lambda i: (rows[i].sketch.distance(query), i))[:5]
