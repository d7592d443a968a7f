"""Query expressions: scores, distances for ORDER BY, similar() with a
threshold of its own, and sketches made by the server from text."""

from django.db.models import BooleanField, FloatField, Func, IntegerField, Value
from django.db.models.functions import Cast

from ..sketches import MinHash, MinHashBbit, SimHash
from .fields import MinHashBbitField, MinHashField, SimHashField

__all__ = ['Similarity', 'SimilarityDistance', 'HammingDistance', 'Similar',
           'MinHashSketch', 'SimHashSketch']

_FIELD_OF_VALUE = {MinHash: MinHashField, MinHashBbit: MinHashBbitField, SimHash: SimHashField}


def _operand(value):
    """An expression as it is; a Python value as a parameter cast to its type."""
    if hasattr(value, 'resolve_expression'):
        return value
    field_class = _FIELD_OF_VALUE.get(type(value))
    if field_class is None:
        raise TypeError('expected an expression or an ndd value (MinHash, MinHashBbit, SimHash), '
                        'not %s' % type(value).__name__)
    return Cast(Value(value, output_field=field_class()), field_class())


class _Binary(Func):
    def __init__(self, expression, other, **extra):
        super().__init__(expression, _operand(other), **extra)


class Similarity(_Binary):
    """similarity(field, other): estimated Jaccard resemblance (minhash, minhash_bbit)."""
    function = 'similarity'
    output_field = FloatField()


class SimilarityDistance(_Binary):
    """field <-> other for minhash: 1 - similarity, for order_by()."""
    function = ''
    arg_joiner = ' <-> '
    output_field = FloatField()


class HammingDistance(_Binary):
    """field <-> other for simhash: the Hamming distance, for order_by()
    (a GiST simhash_ops index serves it)."""
    function = ''
    arg_joiner = ' <-> '
    output_field = IntegerField()


class Similar(Func):
    """similar(field, other, threshold): similarity at least threshold
    (minhash), or Hamming distance at most threshold bits (simhash); usable
    in filter(), served by ndd's GIN indexes."""
    function = 'similar'
    output_field = BooleanField()

    def __init__(self, expression, other, threshold, **extra):
        if hasattr(threshold, 'resolve_expression'):
            limit = threshold
        elif isinstance(threshold, int) and not isinstance(threshold, bool) and isinstance(other, SimHash):
            limit = Cast(Value(threshold), IntegerField())
        else:
            limit = Cast(Value(float(threshold)), FloatField())
        super().__init__(expression, _operand(other), limit, **extra)


class _Sketch(Func):
    """A server-side sketch of a text: name => value options after the text."""

    option_fields = {}

    def __init__(self, text, **options):
        unknown = sorted(set(options) - set(self.option_fields))
        if unknown:
            raise TypeError('%s() has no option %s' % (self.function, ', '.join(unknown)))
        self.options = {name: value for name, value in options.items() if value is not None}
        super().__init__(text)

    def as_sql(self, compiler, connection, **extra):
        text_sql, params = compiler.compile(self.source_expressions[0])
        parts = ['%s::text' % text_sql]
        for name, value in self.options.items():
            # names come from option_fields: fixed words, nothing a caller supplies
            parts.append('%s => %%s' % name)
            params = list(params) + [self.option_fields[name](value)]
        return '%s(%s)' % (self.function, ', '.join(parts)), params


class MinHashSketch(_Sketch):
    """minhash_sketch(text, num_perm, shingle_size, unit, strip_html, seed),
    made by the server: MinHashSketch(Value(body), shingle_size=2), or
    MinHashSketch('body') for a field."""
    function = 'minhash_sketch'
    output_field = MinHashField()
    option_fields = {'num_perm': int, 'shingle_size': int, 'unit': str, 'strip_html': bool, 'seed': int}


class SimHashSketch(_Sketch):
    """simhash(text, shingle_size, unit, strip_html, seed), made by the server."""
    function = 'simhash'
    output_field = SimHashField()
    option_fields = {'shingle_size': int, 'unit': str, 'strip_html': bool, 'seed': int}
