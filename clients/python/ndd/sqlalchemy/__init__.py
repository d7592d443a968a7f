"""ndd's types for SQLAlchemy: column types MinHash, MinHashBbit and SimHash
with comparators, and gin_index() for minhash_ops / simhash_ops indexes.

    sketch = Column(MinHash)
    select(Doc.id).where(Doc.sketch.similar(query, 0.8)).order_by(Doc.sketch.distance(query))

Values are ndd.MinHash, ndd.MinHashBbit and ndd.SimHash, sent in their text
form and cast to the type, so overloaded functions resolve.
"""

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql.base import ischema_names
from sqlalchemy.types import UserDefinedType

from .. import sketches
from ..opclass import minhash_ops, opclass_sql, simhash_ops

__all__ = ['MinHash', 'MinHashBbit', 'SimHash', 'gin_index', 'minhash_ops', 'simhash_ops']


class _CastTarget(UserDefinedType):
    """The type name in CAST(... AS minhash), with no processing of its own."""

    cache_ok = True

    def __init__(self, sql_name):
        self.sql_name = sql_name

    def get_col_spec(self, **kw):
        return self.sql_name


class _NddType(UserDefinedType):
    """A column of one of ndd's types; values are ndd's Python objects."""

    cache_ok = True
    sql_name = None
    value_class = None

    def get_col_spec(self, **kw):
        return self.sql_name

    def _to_text(self, value):
        value = sketches.as_value(self.value_class, value)
        return None if value is None else value.to_text()

    def bind_processor(self, dialect):
        return self._to_text

    def bind_expression(self, bindvalue):
        # a typed parameter: similarity() and % have overloads
        return sa.cast(bindvalue, _CastTarget(self.sql_name))

    def result_processor(self, dialect, coltype):
        value_class = self.value_class

        def process(value):
            # text, or already a value when ndd.psycopg2's adapters are registered
            return sketches.as_value(value_class, value)
        return process

    def literal_processor(self, dialect):
        def process(value):
            return "'%s'::%s" % (self._to_text(value), self.sql_name)
        return process


class _Comparator(UserDefinedType.Comparator):
    def _operand(self, other):
        """other as an SQL expression: a Python value becomes a parameter of
        the column's type (cast to it, as overloads need)."""
        if isinstance(other, sa.sql.ClauseElement):
            return other
        return sa.literal(other, type_=self.type)


class MinHash(_NddType):
    """A minhash column; values are ndd.MinHash."""

    cache_ok = True
    sql_name = 'minhash'
    value_class = sketches.MinHash

    class comparator_factory(_Comparator):
        def similarity(self, other):
            """similarity(column, other): the estimated Jaccard resemblance."""
            return sa.func.similarity(self.expr, self._operand(other), type_=sa.Float)

        def similar(self, other, threshold=None):
            """column % other (threshold ndd.similarity_threshold), or
            similar(column, other, threshold); a minhash_ops index serves both."""
            if threshold is None:
                return self.op('%', is_comparison=True)(other)
            return sa.func.similar(self.expr, self._operand(other), sa.cast(threshold, sa.Float), type_=sa.Boolean)

        def distance(self, other):
            """column <-> other: 1 - similarity, for ORDER BY."""
            return self.op('<->', return_type=sa.Float)(other)


class MinHashBbit(_NddType):
    """A minhash_bbit column; values are ndd.MinHashBbit (no index, no %)."""

    cache_ok = True
    sql_name = 'minhash_bbit'
    value_class = sketches.MinHashBbit

    class comparator_factory(_Comparator):
        def similarity(self, other):
            return sa.func.similarity(self.expr, self._operand(other), type_=sa.Float)


class SimHash(_NddType):
    """A simhash column; values are ndd.SimHash (ints)."""

    cache_ok = True
    sql_name = 'simhash'
    value_class = sketches.SimHash

    class comparator_factory(_Comparator):
        def hamming_distance(self, other):
            return sa.func.hamming_distance(self.expr, self._operand(other), type_=sa.Integer)

        def similar(self, other, max_distance=None):
            """column % other (distance ndd.hamming_threshold), or
            similar(column, other, max_distance); simhash_ops indexes serve both."""
            if max_distance is None:
                return self.op('%', is_comparison=True)(other)
            return sa.func.similar(self.expr, self._operand(other), sa.cast(max_distance, sa.Integer), type_=sa.Boolean)

        def distance(self, other):
            """column <-> other: the Hamming distance, for ORDER BY through GiST."""
            return self.op('<->', return_type=sa.Integer)(other)


def gin_index(name, column, opclass=None, *, fastupdate=None, **options):
    """A GIN index on a minhash or simhash column with ndd's operator class
    and its options:

        gin_index('docs_sketch_idx', Doc.sketch, threshold=0.7, fastupdate=False)

    opclass defaults to minhash_ops or simhash_ops by the type of a Column
    (name it when the column is given by name);
    options are those of the operator class (ndd.opclass.OPCLASS_OPTIONS).
    """
    column_type = getattr(column, 'type', None)
    if opclass is None:
        if not isinstance(column_type, (MinHash, SimHash)):
            raise TypeError('gin_index: name the operator class (minhash_ops or simhash_ops) '
                            'for column %r, whose type is not known here' % (column,))
        opclass = 'simhash_ops' if isinstance(column_type, SimHash) else 'minhash_ops'
    kwargs = {'postgresql_using': 'gin',
              'postgresql_ops': {column.key if hasattr(column, 'key') else column:
                                 opclass_sql(opclass, **options)}}
    if fastupdate is not None:
        kwargs['postgresql_with'] = {'fastupdate': 'on' if fastupdate else 'off'}
    return sa.Index(name, column, **kwargs)


# reflection: columns of these types come back typed
ischema_names['minhash'] = MinHash
ischema_names['minhash_bbit'] = MinHashBbit
ischema_names['simhash'] = SimHash
