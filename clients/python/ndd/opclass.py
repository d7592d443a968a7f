"""Operator classes of ndd's indexes, with their options, as SQL text.

minhash_ops(threshold=0.8) gives 'minhash_ops(threshold = 0.8)'.  Only the
options ndd defines are accepted and every value is checked (numbers as
numbers, names quoted as string literals), so the text is safe to put into
CREATE INDEX as ORMs do with an operator class.
"""

import math
import numbers

from .sketches import UNITS

__all__ = ['minhash_ops', 'simhash_ops', 'opclass_sql', 'OPCLASS_OPTIONS']

# option -> kind of value, per operator class (README, "Operator classes")
OPCLASS_OPTIONS = {
    'minhash_ops': {'threshold': float, 'bands': int, 'rows': int, 'key_bits': int,
                    'num_perm': int, 'unit': UNITS,
                    'shingle_size': int, 'seed': int},
    'simhash_ops': {'max_distance': int, 'keys': ('pairs', 'blocks')},
    'simhash_knn_ops': {},
}


def _option_value(opclass, name, kind, value):
    if isinstance(kind, tuple):
        if value not in kind:
            raise ValueError('%s option %s must be one of %s, not %r' % (opclass, name, ', '.join(kind), value))
        return "'%s'" % value       # one of the fixed words above: nothing to escape
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError('%s option %s must be a number, not %r' % (opclass, name, value))
    if kind is int:
        if int(value) != value:
            raise ValueError('%s option %s must be a whole number, not %r' % (opclass, name, value))
        return str(int(value))
    if not math.isfinite(value):
        raise ValueError('%s option %s must be finite, not %r' % (opclass, name, value))
    return repr(float(value))


def opclass_sql(opclass, **options):
    """'opclass(name = value, ...)', or the bare name without options."""
    if opclass not in OPCLASS_OPTIONS:
        raise ValueError('unknown ndd operator class %r (one of %s)' % (opclass, ', '.join(OPCLASS_OPTIONS)))
    allowed = OPCLASS_OPTIONS[opclass]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError('%s has no option %s (its options: %s)'
                         % (opclass, ', '.join(unknown), ', '.join(allowed) or 'none'))
    rendered = ['%s = %s' % (name, _option_value(opclass, name, allowed[name], value))
                for name, value in options.items() if value is not None]
    return '%s(%s)' % (opclass, ', '.join(rendered)) if rendered else opclass


def minhash_ops(**options):
    """GIN operator class of minhash: threshold, bands, rows, key_bits,
    num_perm, unit, shingle_size, seed."""
    return opclass_sql('minhash_ops', **options)


def simhash_ops(**options):
    """GIN operator class of simhash: max_distance, keys."""
    return opclass_sql('simhash_ops', **options)
