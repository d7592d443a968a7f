"""psycopg2: text results and literals round-trip; the binary form through
COPY ... (FORMAT binary), which runs the types' send and receive."""

import io
import struct

import pytest

from ndd import MinHash, MinHashBbit, NearDuplicateError, SimHash

from conftest import SKETCH_SETTINGS, sketch_sql
from corpus import documents, pairs

psycopg2 = pytest.importorskip('psycopg2')

COPY_SIGNATURE = b'PGCOPY\n\xff\r\n\x00'


def copy_binary_out(cur, query):
    """The single column of a binary COPY, as bytes per row (None for NULL)."""
    out = io.BytesIO()
    cur.copy_expert('COPY ({}) TO STDOUT (FORMAT binary)'.format(query), out)
    data = out.getvalue()
    assert data.startswith(COPY_SIGNATURE)
    pos = len(COPY_SIGNATURE) + 4
    pos += 4 + struct.unpack_from('>i', data, pos)[0]      # header extension
    fields = []
    while True:
        (count,) = struct.unpack_from('>h', data, pos)
        pos += 2
        if count == -1:
            return fields
        (length,) = struct.unpack_from('>i', data, pos)
        pos += 4
        fields.append(None if length == -1 else data[pos:pos + length])
        pos += max(length, 0)


def copy_binary_in(cur, table, values):
    """Rows of one column, each value's binary form, through COPY FROM STDIN."""
    data = COPY_SIGNATURE + struct.pack('>ii', 0, 0)
    for value in values:
        payload = value.to_binary()
        data += struct.pack('>hi', 1, len(payload)) + payload
    data += struct.pack('>h', -1)
    cur.copy_expert('COPY {} FROM STDIN (FORMAT binary)'.format(table), io.BytesIO(data))


CASES = [('minhash', MinHash, sketch_sql(s)) for s in SKETCH_SETTINGS] + \
    [('minhash_bbit', MinHashBbit, 'minhash_bbit({}, {:d})'.format(sketch_sql(SKETCH_SETTINGS[i]), b))
     for i, b in ((0, 4), (1, 1), (2, 8), (4, 2))] + \
    [('simhash', SimHash, 'simhash(d)')]


@pytest.mark.parametrize('sql_type, value_class, sql_value', CASES, ids=lambda c: str(c)[:40])
def test_round_trip_text_and_binary(conn2, sql_type, value_class, sql_value):
    cur = conn2.cursor()
    cur.execute('CREATE TEMP TABLE originals AS SELECT n, {v} AS v FROM unnest(%s::text[])'
                ' WITH ORDINALITY AS t(d, n)'.format(v=sql_value), (documents(20, 30),))
    cur.execute('SELECT v, v::text FROM originals ORDER BY n')
    rows = cur.fetchall()
    assert all(type(v) is value_class for v, _ in rows)
    # text: the value as a literal comes back as the same text
    for value, text in rows:
        assert value.to_text() == text
        cur.execute('SELECT %s::text', (value,))
        assert cur.fetchone()[0] == text
    # binary: Python's form equals the server's send, and receive reads it back
    sent = copy_binary_out(cur, 'SELECT v FROM originals ORDER BY n')
    assert [v.to_binary() for v, _ in rows] == sent
    assert [value_class.from_binary(b) for b in sent] == [v for v, _ in rows]
    cur.execute('CREATE TEMP TABLE received (v {})'.format(sql_type))
    copy_binary_in(cur, 'received', [v for v, _ in rows])
    cur.execute('SELECT array_agg(v::text) FROM received')
    assert cur.fetchone()[0] == [text for _, text in rows]


def test_similarity_equals_server(conn2):
    cur = conn2.cursor()
    docs = documents(21, 50)
    cur.execute('SELECT {}, minhash_bbit({}, 2) FROM unnest(%s::text[]) d'.format(
        sketch_sql(SKETCH_SETTINGS[0]), sketch_sql(SKETCH_SETTINGS[0])), (docs,))
    sketches = cur.fetchall()
    for i, j in pairs(22, 100, len(docs)):
        (a, a2), (b, b2) = sketches[i], sketches[j]
        cur.execute('SELECT similarity(%s, %s), similarity(%s, %s)', (a, b, a2, b2))
        assert cur.fetchone() == (a.similarity(b), a2.similarity(b2))


def test_null(conn2):
    cur = conn2.cursor()
    cur.execute('SELECT NULL::minhash, NULL::simhash, %s::minhash_bbit', (None,))
    assert cur.fetchone() == (None, None, None)


def test_guard_error(conn2):
    cur = conn2.cursor()
    cur.execute('CREATE TEMP TABLE t (id int PRIMARY KEY, fp simhash)')
    cur.execute("CREATE TRIGGER g BEFORE INSERT ON t FOR EACH ROW"
                " EXECUTE FUNCTION ndd_reject_near_duplicates('fp', '2')")
    cur.execute('INSERT INTO t VALUES (7, %s)', (SimHash(0x0123456789abcdef),))
    with pytest.raises(psycopg2.errors.UniqueViolation) as raised:
        cur.execute('INSERT INTO t VALUES (8, %s)', (SimHash(0x0123456789abcdee),))
    error = NearDuplicateError.from_exception(raised.value)
    assert (error.existing_id, error.distance, error.max_distance, error.table) == (7, 1, 2, 't')


def test_registration_without_ndd_types_is_a_clear_error(conn2):
    from ndd.psycopg2 import register_ndd
    conn2.cursor().execute('SET search_path = pg_catalog')
    with pytest.raises(psycopg2.ProgrammingError, match='ndd types not found.*minhash'):
        register_ndd(conn2)
