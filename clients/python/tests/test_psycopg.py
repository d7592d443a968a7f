"""psycopg 3: values round-trip with the server byte for byte, in text and
binary, and Python's scores equal the server's."""

import random

import pytest

from ndd import MinHash, MinHashBbit, NearDuplicateError, SimHash

from conftest import SKETCH_SETTINGS, sketch_sql
from corpus import document, documents, pairs

psycopg = pytest.importorskip('psycopg')

SEND = {MinHash: 'minhash_send', MinHashBbit: 'minhash_bbit_send', SimHash: 'simhash_send'}




def fetch(conn, sql_value, docs, binary):
    cur = conn.cursor(binary=binary)
    cur.execute('SELECT v, v::text, send FROM (SELECT {v} AS v, n FROM unnest(%s::text[])'
                ' WITH ORDINALITY AS t(d, n)) s, LATERAL (SELECT {send}(v) AS send) x'
                ' ORDER BY n'.format(v=sql_value, send=send_function(sql_value)), [docs])
    return cur.fetchall()


def send_function(sql_value):
    if sql_value.startswith('minhash_bbit('):
        return 'minhash_bbit_send'
    if sql_value.startswith('simhash('):
        return 'simhash_send'
    return 'minhash_send'


def check_round_trip(conn, rows, sql_type):
    """Each value: Python's text and binary equal the server's, and the
    value sent back (text and binary parameters) equals the original."""
    for value, text, send in rows:
        assert value.to_text() == text
        assert value.to_binary() == bytes(send)
        for placeholder in ('%t', '%b'):
            back = conn.execute('SELECT {p}::text, {send}({p})'.format(
                p=placeholder, send=SEND[type(value)]), [value, value]).fetchone()
            assert back == (text, bytes(send))
        assert conn.execute('SELECT %s::{}::text'.format(sql_type), [text]).fetchone()[0] == text


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
@pytest.mark.parametrize('settings', SKETCH_SETTINGS, ids=lambda s: '{unit}-{num_perm}'.format(**s))
def test_minhash_round_trip(conn, settings, binary):
    rows = fetch(conn, sketch_sql(settings), documents(1, 40), binary)
    assert any(v.empty for v, _, _ in rows) and any(v.filled for v, _, _ in rows)
    check_round_trip(conn, rows, 'minhash')


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
@pytest.mark.parametrize('elements', ['text', 'bigint'])
def test_minhash_of_arrays_round_trip(conn, elements, binary):
    # sets of 0 to 30 elements, as text[] or bigint[]
    sql = ("minhash_sketch(CASE WHEN d = '' THEN '{{}}'::{e}[] ELSE string_to_array("
           "regexp_replace(d, '[a-z]', '', 'g'), ' ')::{e}[] END, num_perm => 48, seed => 5)").format(e=elements)
    rows = fetch(conn, sql, documents(2, 30, length=(1, 30)), binary)
    assert {v.unit for v, _, _ in rows} == {elements}
    check_round_trip(conn, rows, 'minhash')


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
@pytest.mark.parametrize('bits', [1, 2, 4, 8])
def test_minhash_bbit_round_trip(conn, bits, binary):
    for settings in SKETCH_SETTINGS[:3] + SKETCH_SETTINGS[4:]:
        sql = 'minhash_bbit({}, {:d})'.format(sketch_sql(settings), bits)
        rows = fetch(conn, sql, documents(3, 20), binary)
        assert any(v.empty for v, _, _ in rows)
        check_round_trip(conn, rows, 'minhash_bbit')


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
def test_simhash_round_trip(conn, binary):
    rows = fetch(conn, 'simhash(d, shingle_size => 1)', documents(4, 40), binary)
    # the extremes, high bit set (above a bigint) and zero
    extra = conn.cursor(binary=binary).execute(
        "SELECT v, v::text, simhash_send(v) FROM unnest('{0000000000000000,ffffffffffffffff,"
        "8000000000000000,7fffffffffffffff}'::simhash[]) v").fetchall()
    assert [v for v, _, _ in extra] == [0, 2**64 - 1, 2**63, 2**63 - 1]
    assert all(type(v) is SimHash and isinstance(v, int) for v, _, _ in rows + extra)
    check_round_trip(conn, rows + extra, 'simhash')
    assert conn.execute('SELECT %s::simhash::bigint', [SimHash(2**63).to_text()]).fetchone()[0] \
        == SimHash(2**63).to_bigint()


def test_simhash_from_plain_int_and_bigint(conn):
    assert conn.execute('SELECT %s::text', [SimHash(-1)]).fetchone()[0] == 'ffffffffffffffff'
    assert conn.execute('SELECT (-5)::bigint::simhash').fetchone()[0] == SimHash(-5)


def similarity_pairs(conn, sql_value, docs, index_pairs):
    """(a, b, server similarity(a, b)) for each pair of documents."""
    cur = conn.execute(
        'WITH v AS (SELECT n, {v} AS v FROM unnest(%s::text[]) WITH ORDINALITY AS t(d, n)) '
        'SELECT a.v, b.v, similarity(a.v, b.v) FROM unnest(%s::int[], %s::int[]) AS p(i, j) '
        'JOIN v a ON a.n = p.i JOIN v b ON b.n = p.j'.format(v=sql_value),
        [docs, [i + 1 for i, _ in index_pairs], [j + 1 for _, j in index_pairs]])
    return cur.fetchall()


@pytest.mark.parametrize('settings', SKETCH_SETTINGS, ids=lambda s: '{unit}-{num_perm}'.format(**s))
def test_minhash_similarity_equals_server(conn, settings):
    docs = documents(5, 60)
    rows = similarity_pairs(conn, sketch_sql(settings), docs, pairs(6, 300, len(docs)))
    assert len(rows) == 300
    assert {a.similarity(b) for a, b, _ in rows} - {0.0, 1.0}, 'pairs of every kind'
    for a, b, server in rows:
        assert a.similarity(b) == server
        assert a.distance(b) == 1.0 - server


@pytest.mark.parametrize('bits', [1, 2, 4, 8])
def test_minhash_bbit_similarity_equals_server(conn, bits):
    docs = documents(7, 50)
    for settings in SKETCH_SETTINGS[:3]:
        sql = 'minhash_bbit({}, {:d})'.format(sketch_sql(settings), bits)
        for a, b, server in similarity_pairs(conn, sql, docs, pairs(8, 150, len(docs))):
            assert a.similarity(b) == server


def test_to_bbit_equals_server(conn):
    rows = conn.execute(
        'SELECT s, minhash_bbit(s, 1), minhash_bbit(s, 2), minhash_bbit(s, 4), minhash_bbit(s, 8)'
        ' FROM (SELECT {} AS s FROM unnest(%s::text[]) d) x'.format(sketch_sql(SKETCH_SETTINGS[2])),
        [documents(9, 30)]).fetchall()
    for sketch, *bbits in rows:
        assert [sketch.to_bbit(b) for b in (1, 2, 4, 8)] == bbits


def test_hamming_distance_equals_server(conn):
    docs = documents(10, 60)
    index_pairs = pairs(11, 200, len(docs))
    rows = conn.execute(
        'WITH v AS (SELECT n, simhash(d) AS v FROM unnest(%s::text[]) WITH ORDINALITY AS t(d, n)) '
        'SELECT a.v, b.v, hamming_distance(a.v, b.v), a.v <-> b.v FROM unnest(%s::int[], %s::int[]) AS p(i, j) '
        'JOIN v a ON a.n = p.i JOIN v b ON b.n = p.j',
        [docs, [i + 1 for i, _ in index_pairs], [j + 1 for _, j in index_pairs]]).fetchall()
    assert len(rows) == 200
    for a, b, distance, operator in rows:
        assert a.hamming_distance(b) == distance == operator


def test_null_and_arrays(conn):
    row = conn.execute('SELECT NULL::minhash, NULL::minhash_bbit, NULL::simhash, '
                       "ARRAY[minhash_sketch('a b', shingle_size => 1), NULL], "
                       "ARRAY['0000000000000001'::simhash]").fetchone()
    assert row[:3] == (None, None, None)
    assert isinstance(row[3][0], MinHash) and row[3][1] is None
    assert row[4] == [1]
    assert conn.execute('SELECT similarity(%s::minhash, %s)', [None, None]).fetchone() == (None,)


def test_different_settings_refused_like_the_server(conn):
    a, b = conn.execute("SELECT minhash_sketch('a b c', num_perm => 16), "
                        "minhash_sketch('a b c', num_perm => 16, seed => 1)").fetchone()
    with pytest.raises(ValueError, match='different settings'):
        a.similarity(b)
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conn.execute('SELECT similarity(%s, %s)', [a, b])


def test_insert_guard_names_the_row(conn):
    conn.execute('CREATE TEMP TABLE guarded (id bigint PRIMARY KEY, body text, sketch minhash)')
    conn.execute('CREATE INDEX ON guarded USING gin (sketch minhash_ops) WITH (fastupdate = off)')
    conn.execute("CREATE TRIGGER no_near_duplicates BEFORE INSERT OR UPDATE ON guarded FOR EACH ROW"
                 " EXECUTE FUNCTION ndd_reject_near_duplicates('sketch', '0.8')")
    rng = random.Random(12)
    docs = [document(rng, 50) for _ in range(5)]
    for i, doc in enumerate(docs, start=10):
        conn.execute('INSERT INTO guarded VALUES (%s, %s, minhash_sketch(%s::text))', [i, doc, doc])
    conn.execute('SAVEPOINT s')
    with pytest.raises(psycopg.errors.UniqueViolation) as raised:
        conn.execute('INSERT INTO guarded VALUES (99, %s, minhash_sketch(%s::text))',
                     [docs[3] + ' one more', docs[3] + ' one more'])
    conn.execute('ROLLBACK TO SAVEPOINT s')
    error = NearDuplicateError.from_exception(raised.value)
    assert error.existing_id == 13 and error.key == {'id': '13'}
    assert error.table == 'guarded' and error.column == 'sketch'
    assert 0.8 <= error.similarity <= 1 and error.threshold == 0.8
    # a NULL sketch passes; another error is not the guard's
    conn.execute('INSERT INTO guarded VALUES (100, NULL, NULL)')
    with pytest.raises(psycopg.errors.UniqueViolation) as raised:
        conn.execute('INSERT INTO guarded VALUES (100, NULL, NULL)')
    assert NearDuplicateError.from_exception(raised.value) is None


def test_simhash_guard_reports_the_distance(conn):
    conn.execute('CREATE TEMP TABLE tweets (id int PRIMARY KEY, fp simhash)')
    conn.execute("CREATE TRIGGER no_near_duplicates BEFORE INSERT ON tweets FOR EACH ROW"
                 " EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '3')")
    conn.execute('INSERT INTO tweets VALUES (1, %s)', [SimHash(0xffff0000ffff0000)])
    from ndd import near_duplicates_raised
    with pytest.raises(NearDuplicateError) as raised:
        with near_duplicates_raised():
            conn.execute('INSERT INTO tweets VALUES (2, %s)', [SimHash(0xffff0000ffff0003)])
    assert (raised.value.existing_id, raised.value.distance, raised.value.max_distance) == (1, 2, 3)
    assert isinstance(raised.value.__cause__, psycopg.errors.UniqueViolation)


def test_async_registration(ndd_database):
    import asyncio
    from ndd.psycopg import register_ndd_async

    async def sketch_and_back():
        async with await psycopg.AsyncConnection.connect() as aconn:
            await register_ndd_async(aconn)
            cur = await aconn.execute("SELECT minhash_sketch('a b c d', shingle_size => 1)")
            (value,) = await cur.fetchone()
            cur = await aconn.execute('SELECT %b::text', [value])
            return value, (await cur.fetchone())[0]

    value, text = asyncio.run(sketch_and_back())
    assert isinstance(value, MinHash) and value.to_text() == text


def test_registration_without_ndd_types_is_a_clear_error(conn):
    from ndd.psycopg import register_ndd
    conn.execute('SET search_path = pg_catalog')
    with pytest.raises(psycopg.ProgrammingError, match='ndd types not found.*minhash'):
        register_ndd(conn)


# Weighted minhash (weighted_minhash_sketch()): ordinary minhash values with
# the units weighted_word, weighted_char (documents, each shingle weighing its
# count), weighted_text and weighted_bigint (arrays with float8 weights, a
# repeated element weighing the sum of its weights).  Arrays: a document's
# words (text[]) or its numbers (bigint[]), the first three repeated, each
# element weighing a deterministic function of it and of its place.
def weighted_sql(settings):
    kind = settings['kind']
    if kind in ('word', 'char'):
        return ("weighted_minhash_sketch(d, num_perm => {num_perm:d}, shingle_size => {shingle_size:d}, "
                "unit => '{kind}', strip_html => {strip_html}, seed => {seed:d})").format(**settings)
    if kind == 'text':
        elements = "string_to_array(d, ' ')"
        weight = '0.25 + mod(length(e), 5) * 0.5 + mod(n, 3) * 1.5'
    else:
        elements = ("ARRAY(SELECT m[1]::bigint FROM regexp_matches(d, '[0-9]+', 'g') WITH ORDINALITY r(m, i) "
                    "ORDER BY i)")
        weight = '0.5 + mod(e, 7) * 0.75 + mod(n, 4) / 3.0'
    features = '({e}) || ({e})[1:3]'.format(e=elements)
    return ("weighted_minhash_sketch({f}, ARRAY(SELECT ({w})::float8 FROM unnest({f}) WITH ORDINALITY u(e, n) "
            "ORDER BY n), num_perm => {num_perm:d}, seed => {seed:d})").format(
                f=features, w=weight, **settings)


WEIGHTED_SETTINGS = [
    dict(kind='word', num_perm=128, shingle_size=1, strip_html='false', seed=0),
    dict(kind='word', num_perm=16, shingle_size=2, strip_html='true', seed=-7),
    dict(kind='word', num_perm=200, shingle_size=32, strip_html='false', seed=99),
    dict(kind='char', num_perm=64, shingle_size=3, strip_html='false', seed=2**31 - 1),
    dict(kind='char', num_perm=17, shingle_size=1, strip_html='true', seed=-2**31),
    dict(kind='char', num_perm=1024, shingle_size=5, strip_html='false', seed=3),
    dict(kind='text', num_perm=100, seed=123456),
    dict(kind='text', num_perm=16, seed=-1),
    dict(kind='bigint', num_perm=48, seed=5),
    dict(kind='bigint', num_perm=333, seed=-2**31),
]


def weighted_id(settings):
    return 'weighted_{kind}-{num_perm}'.format(**settings)


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
@pytest.mark.parametrize('settings', WEIGHTED_SETTINGS, ids=weighted_id)
def test_weighted_minhash_round_trip(conn, settings, binary):
    docs = documents(11, 40) + ['<p>alpha1 <b>alpha1</b> bravo2</p> alpha1', 'x']
    rows = fetch(conn, weighted_sql(settings), docs, binary)
    unit = 'weighted_' + settings['kind']
    assert {v.unit for v, _, _ in rows} == {unit}
    assert all(v.num_perm == settings['num_perm'] and v.seed == settings['seed'] for v, _, _ in rows)
    assert all(v.shingle_size == settings.get('shingle_size', 1) for v, _, _ in rows)
    assert any(v.empty for v, _, _ in rows) and sum(not v.empty for v, _, _ in rows) > 30
    check_round_trip(conn, rows, 'minhash')
    # all of them back as one array parameter, and the server's settings
    back = conn.execute('SELECT array_agg(u::text ORDER BY n), array_agg((minhash_settings(u)).unit ORDER BY n)'
                        ' FROM unnest(%s::minhash[]) WITH ORDINALITY AS x(u, n)',
                        [[v for v, _, _ in rows]]).fetchone()
    assert back == ([t for _, t, _ in rows], [unit] * len(rows))


@pytest.mark.parametrize('binary', [False, True], ids=['text', 'binary'])
@pytest.mark.parametrize('bits', [1, 8])
def test_weighted_minhash_bbit_round_trip(conn, bits, binary):
    for settings in WEIGHTED_SETTINGS[::3]:
        sql = 'minhash_bbit({}, {:d})'.format(weighted_sql(settings), bits)
        rows = fetch(conn, sql, documents(12, 20), binary)
        assert {v.unit for v, _, _ in rows} == {'weighted_' + settings['kind']}
        check_round_trip(conn, rows, 'minhash_bbit')


@pytest.mark.parametrize('settings', WEIGHTED_SETTINGS, ids=weighted_id)
def test_weighted_minhash_similarity_equals_server(conn, settings):
    docs = documents(13, 60)
    rows = similarity_pairs(conn, weighted_sql(settings), docs, pairs(14, 300, len(docs)))
    assert len(rows) == 300
    assert {a.similarity(b) for a, b, _ in rows} - {0.0, 1.0}, 'pairs of every kind'
    for a, b, server in rows:
        assert a.unit == b.unit == 'weighted_' + settings['kind']
        assert a.similarity(b) == server
        assert b.similarity(a) == server
        assert a.distance(b) == 1.0 - server
    bbits = similarity_pairs(conn, 'minhash_bbit({}, 2)'.format(weighted_sql(settings)), docs,
                             pairs(15, 100, len(docs)))
    for a, b, server in bbits:
        assert a.similarity(b) == server


def test_weighted_units_checked_like_the_server(conn):
    """What the client refuses, the server refuses; the unit's message is the server's detail."""
    for text in ('v1,num_perm=16,unit=weighted_text,shingle_size=2,seed=0:empty',
                 'v1,num_perm=16,unit=weighted_bigint,shingle_size=5,seed=0:empty',
                 'v1,num_perm=16,unit=weighted_line,shingle_size=1,seed=0:empty'):
        with pytest.raises(ValueError) as client_error:
            MinHash.from_text(text)
        with pytest.raises(psycopg.errors.InvalidTextRepresentation) as server_error:
            conn.execute('SELECT %s::text::minhash', [text])
        conn.rollback()
        if 'line' in text:
            assert server_error.value.diag.message_detail.rstrip('.') in str(client_error.value)
    for text in ('v1,num_perm=16,unit=weighted_word,shingle_size=32,seed=0:empty',
                 'v1,num_perm=16,unit=weighted_bigint,shingle_size=1,seed=0:empty'):
        assert conn.execute('SELECT %s::text::minhash::text', [text]).fetchone()[0] == \
            MinHash.from_text(text).to_text() == text
