"""Fixtures: a server named by PGHOST, PGPORT, PGUSER, PGDATABASE (libpq's
own variables) where ndd may be created."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Sketch settings the round-trip and similarity tests cover: both units of
# text, arrays, seeds of both signs, K not a multiple of 32 (a filled
# bitmap's last word is partial) and short documents (filled positions).
SKETCH_SETTINGS = [
    dict(num_perm=128, shingle_size=5, unit='word', seed=0),
    dict(num_perm=16, shingle_size=1, unit='word', seed=-7),
    dict(num_perm=100, shingle_size=2, unit='word', seed=123456),
    dict(num_perm=64, shingle_size=3, unit='char', seed=2**31 - 1),
    dict(num_perm=17, shingle_size=32, unit='char', seed=-2**31),
]


def sketch_sql(settings, column='d'):
    """SQL making a sketch of text column `column` with these settings
    (only whitelisted values are formatted in)."""
    return ("minhash_sketch({col}, num_perm => {num_perm:d}, shingle_size => {shingle_size:d}, "
            "unit => '{unit}', seed => {seed:d})").format(col=column, **settings)


@pytest.fixture(scope='session')
def ndd_database():
    """Creates ndd where the tests run; once per session, with either driver."""
    try:
        import psycopg
        with psycopg.connect(autocommit=True) as conn:
            conn.execute('CREATE EXTENSION IF NOT EXISTS ndd')
    except ImportError:
        psycopg2 = pytest.importorskip('psycopg2')
        conn = psycopg2.connect('')
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute('CREATE EXTENSION IF NOT EXISTS ndd')
        conn.close()
    return True


@pytest.fixture
def conn(ndd_database):
    """A psycopg 3 connection with ndd's types registered, in a transaction
    that is rolled back."""
    psycopg = pytest.importorskip('psycopg')
    from ndd.psycopg import register_ndd
    conn = psycopg.connect()
    register_ndd(conn)
    yield conn
    conn.rollback()
    conn.close()


@pytest.fixture
def conn2(ndd_database):
    """A psycopg2 connection with ndd's types registered, rolled back."""
    psycopg2 = pytest.importorskip('psycopg2')
    from ndd.psycopg2 import register_ndd
    conn = psycopg2.connect('')
    register_ndd(conn)
    yield conn
    conn.rollback()
    conn.close()
