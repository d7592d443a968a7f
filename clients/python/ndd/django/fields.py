"""Model fields of ndd's types, and the __similar lookup."""

from django.db.models import Field, Lookup

from ..sketches import MinHash, MinHashBbit, SimHash, as_value

__all__ = ['MinHashField', 'MinHashBbitField', 'SimHashField']


class _SketchField(Field):
    """A column of one of ndd's types, holding ndd's Python value."""

    empty_strings_allowed = False
    value_class = None
    sql_type = None

    def db_type(self, connection):
        return self.sql_type

    def _to_value(self, value):
        return as_value(self.value_class, value)

    def from_db_value(self, value, expression, connection):
        # a str, or already a value when ndd.psycopg2's adapters are registered
        return self._to_value(value)

    def to_python(self, value):
        return self._to_value(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        if value is None or hasattr(value, 'resolve_expression'):
            return value
        return self._to_value(value).to_text()

    def value_to_string(self, obj):
        value = self.value_from_object(obj)
        return '' if value is None else self._to_value(value).to_text()


class MinHashField(_SketchField):
    description = 'minhash sketch (ndd)'
    value_class = MinHash
    sql_type = 'minhash'


class MinHashBbitField(_SketchField):
    description = 'b-bit minhash sketch (ndd)'
    value_class = MinHashBbit
    sql_type = 'minhash_bbit'


class SimHashField(_SketchField):
    description = 'simhash fingerprint (ndd)'
    value_class = SimHash
    sql_type = 'simhash'


@MinHashField.register_lookup
@SimHashField.register_lookup
class Similar(Lookup):
    """field__similar=value: the % operator, at ndd.similarity_threshold
    (minhash) or ndd.hamming_threshold (simhash); ndd's GIN indexes serve it.
    For a threshold of the query's own, filter on ndd.django.Similar()."""

    lookup_name = 'similar'

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        sql_type = self.lhs.output_field.db_type(connection)
        # %% is the operator %, escaped for the driver's parameter syntax
        return '%s %%%% (%s)::%s' % (lhs, rhs, sql_type), lhs_params + rhs_params
