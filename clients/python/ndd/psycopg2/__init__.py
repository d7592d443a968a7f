"""ndd's types for psycopg2: register_ndd(connection).

After registration, minhash and minhash_bbit columns load as ndd.MinHash and
ndd.MinHashBbit, simhash columns as ndd.SimHash (an int); those objects are
sent as literals cast to their type ('...'::minhash), so functions with
overloads (similarity) resolve without a cast in the query.  psycopg2 reads
results as text only: for the binary form use COPY ... (FORMAT binary) with
MinHash.to_binary() / from_binary().
"""

import psycopg2
from psycopg2.extensions import (QuotedString, connection, cursor, new_array_type, new_type,
                                 register_adapter, register_type)

from ..sketches import MinHash, MinHashBbit, SimHash

__all__ = ['register_ndd']

_TYPES = (('minhash', MinHash), ('minhash_bbit', MinHashBbit), ('simhash', SimHash))

# the type names as the server spells them for this search_path (set at
# registration: psycopg2's adapters are global)
_type_names = {}


class _SketchAdapter:
    """A value as its text form, cast to its type."""

    def __init__(self, value):
        self._value = value

    def prepare(self, conn):
        self._conn = conn

    def getquoted(self):
        literal = QuotedString(self._value.to_text())
        if getattr(self, '_conn', None) is not None:
            literal.prepare(self._conn)
        return literal.getquoted() + b'::' + _type_names[type(self._value)].encode('utf-8')


def _caster(value_class):
    def cast(value, cur):
        return None if value is None else value_class.from_text(value)
    return cast


def register_ndd(conn_or_curs, globally=False):
    """Register ndd's types on a connection or cursor (or, with
    globally=True, on every connection) for psycopg2."""
    conn = conn_or_curs if isinstance(conn_or_curs, connection) else conn_or_curs.connection
    scope = None if globally else conn_or_curs
    with conn.cursor(cursor_factory=cursor) as cur:
        # to_regtype: the type the search_path finds; format_type: its name
        # as this search_path must spell it (schema-qualified if need be)
        cur.execute("SELECT t.name, t.oid, pg_type.typarray, format_type(t.oid, NULL)"
                    " FROM unnest(%s::text[]) AS n(name)"
                    " CROSS JOIN LATERAL (SELECT n.name, to_regtype(n.name)::oid) AS t(name, oid)"
                    " LEFT JOIN pg_type ON pg_type.oid = t.oid",
                    ([name for name, _ in _TYPES],))
        found = {name: (oid, array_oid, spelled) for name, oid, array_oid, spelled in cur.fetchall()}
    missing = [name for name, _ in _TYPES if found[name][0] is None]
    if missing:
        raise psycopg2.ProgrammingError(
            'ndd types not found in the database: %s (run CREATE EXTENSION ndd, '
            'or put its schema on the search_path)' % ', '.join(missing))
    for name, value_class in _TYPES:
        oid, array_oid, spelled = found[name]
        caster = new_type((oid,), name.upper(), _caster(value_class))
        register_type(caster, scope)
        register_type(new_array_type((array_oid,), name.upper() + '[]', caster), scope)
        _type_names[value_class] = spelled
        register_adapter(value_class, _SketchAdapter)
