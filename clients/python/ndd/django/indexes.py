"""GIN indexes with ndd's operator classes and their options."""

from django.contrib.postgres.indexes import GinIndex

from ..opclass import OPCLASS_OPTIONS, opclass_sql

__all__ = ['MinHashIndex', 'SimHashIndex']


class _NddGinIndex(GinIndex):
    opclass = None

    def __init__(self, *, fields=(), name=None, fastupdate=None, gin_pending_list_limit=None,
                 opclasses=(), **options):
        if len(fields) != 1:
            raise ValueError('%s indexes one field, not %d' % (type(self).__name__, len(fields)))
        if opclasses:
            raise TypeError('%s sets its own operator class; give its options instead' % type(self).__name__)
        self.options = {k: v for k, v in options.items() if v is not None}
        # checked and rendered here: Django puts the operator class into the DDL as written
        super().__init__(fields=fields, name=name, fastupdate=fastupdate,
                         gin_pending_list_limit=gin_pending_list_limit,
                         opclasses=[opclass_sql(self.opclass, **self.options)])

    def deconstruct(self):
        path, args, kwargs = super().deconstruct()
        kwargs.pop('opclasses', None)
        kwargs.update(self.options)
        return path, args, kwargs


class MinHashIndex(_NddGinIndex):
    """GIN minhash_ops on a MinHashField: MinHashIndex(fields=['sketch'],
    name='doc_sketch_idx', threshold=0.7, shingle_size=2, fastupdate=False).
    Options: """ + ', '.join(OPCLASS_OPTIONS['minhash_ops']) + '.'
    opclass = 'minhash_ops'


class SimHashIndex(_NddGinIndex):
    """GIN simhash_ops on a SimHashField; options max_distance, keys."""
    opclass = 'simhash_ops'
