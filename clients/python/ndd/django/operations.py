"""Migration operations: CREATE EXTENSION ndd, the insert guard, and live
clusters, each installed with ndd's own SQL functions."""

from django.contrib.postgres.operations import CreateExtension
from django.db.migrations.operations.base import Operation

__all__ = ['NddExtension', 'RejectNearDuplicates', 'MaintainClusters']


class NddExtension(CreateExtension):
    """CREATE EXTENSION IF NOT EXISTS ndd."""

    def __init__(self):
        super().__init__('ndd')


def _quote_ident(name):
    """An identifier quoted for SQL, embedded quotes doubled (Django's
    quote_name leaves them as they are)."""
    return '"%s"' % name.replace('"', '""')


def _ndd_schema(schema_editor):
    """The schema ndd is installed in, quoted, to name its functions."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT n.nspname FROM pg_catalog.pg_extension e"
                       " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
                       " WHERE e.extname = 'ndd'")
        row = cursor.fetchone()
    if row is None:
        raise RuntimeError('ndd is not installed in this database: '
                           'add NddExtension() to an earlier migration')
    return _quote_ident(row[0])


def _column(model, field_name):
    return model._meta.get_field(field_name).column


class RejectNearDuplicates(Operation):
    """Puts ndd's insert guard on a model's table: a trigger running
    ndd_reject_near_duplicates(sketch column [, threshold [, action [, text column]]]).

    threshold: a similarity for a MinHashField, a distance in bits for a
    SimHashField (None: the server's ndd.similarity_threshold or
    ndd.hamming_threshold when the row is checked); action 'error' (raise
    SQLSTATE 23505, see ndd.NearDuplicateError) or 'skip'; verify_field, a
    text field to decide by exact Jaccard; timing 'BEFORE' (the sketch must
    be set by the insert) or 'AFTER' (reads a sketch filled by then).
    """

    reversible = True
    reduces_to_sql = True

    def __init__(self, model_name, field, threshold=None, action='error', verify_field=None,
                 timing='BEFORE', name='ndd_reject_near_duplicates'):
        if action not in ('error', 'skip'):
            raise ValueError("action must be 'error' or 'skip', not %r" % (action,))
        if timing not in ('BEFORE', 'AFTER'):
            raise ValueError("timing must be 'BEFORE' or 'AFTER', not %r" % (timing,))
        if threshold is None and (action != 'error' or verify_field is not None):
            raise ValueError('give the threshold when you give an action or a verify_field')
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise TypeError('threshold must be a number, not %r' % (threshold,))
        self.model_name = model_name
        self.field = field
        self.threshold = threshold
        self.action = action
        self.verify_field = verify_field
        self.timing = timing
        self.name = name

    def state_forwards(self, app_label, state):
        pass        # the trigger lives in the database only

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        arguments = [_column(model, self.field)]
        if self.threshold is not None:
            arguments.append(repr(self.threshold))
            if self.action != 'error' or self.verify_field is not None:
                arguments.append(self.action)
            if self.verify_field is not None:
                arguments.append(_column(model, self.verify_field))
        quote = _quote_ident
        schema_editor.execute(
            'CREATE TRIGGER %s %s INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION '
            '%s.ndd_reject_near_duplicates(%s)' % (
                quote(self.name), self.timing, quote(model._meta.db_table), _ndd_schema(schema_editor),
                ', '.join(schema_editor.quote_value(a) for a in arguments)))

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        schema_editor.execute('DROP TRIGGER IF EXISTS %s ON %s' % (
            _quote_ident(self.name), _quote_ident(model._meta.db_table)))

    def describe(self):
        return 'Reject near-duplicate %s rows by %s' % (self.model_name, self.field)

    @property
    def migration_name_fragment(self):
        return 'reject_near_duplicate_%s' % self.model_name.lower()

    def deconstruct(self):
        kwargs = {'model_name': self.model_name, 'field': self.field}
        for name, default in (('threshold', None), ('action', 'error'), ('verify_field', None),
                              ('timing', 'BEFORE'), ('name', 'ndd_reject_near_duplicates')):
            if getattr(self, name) != default:
                kwargs[name] = getattr(self, name)
        return type(self).__qualname__, [], kwargs


class MaintainClusters(Operation):
    """Puts a model's table under live dedup with ndd_maintain_clusters():
    a cluster table (id, cluster_id) of its near-duplicate clusters, kept
    current by triggers as rows change.  Reversed by dropping the triggers
    and the cluster table."""

    reversible = True
    reduces_to_sql = False

    _OPTIONS = ('threshold', 'max_distance', 'representative_order', 'cluster_table')

    def __init__(self, model_name, field, id_field='id', threshold=None, max_distance=None,
                 representative_order=None, cluster_table=None):
        self.model_name = model_name
        self.field = field
        self.id_field = id_field
        self.threshold = threshold
        self.max_distance = max_distance
        self.representative_order = representative_order
        self.cluster_table = cluster_table

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        casts = {'threshold': 'float8', 'max_distance': 'int4', 'representative_order': 'text',
                 'cluster_table': 'name'}
        named = [(name, getattr(self, name)) for name in self._OPTIONS if getattr(self, name) is not None]
        sql = 'SELECT %s.ndd_maintain_clusters(%%s::regclass, %%s, %%s%s)' % (
            _ndd_schema(schema_editor),
            ''.join(', %s => %%s::%s' % (name, casts[name]) for name, _ in named))
        params = [_quote_ident(model._meta.db_table), _column(model, self.field),
                  _column(model, self.id_field)] + [value for _, value in named]
        schema_editor.execute(sql, params)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        table = _quote_ident(model._meta.db_table)
        # the cluster table is named by the trigger's first two arguments
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("SELECT tgargs FROM pg_catalog.pg_trigger"
                           " WHERE tgrelid = %s::regclass AND tgname = 'ndd_maintain_clusters'", [table])
            row = cursor.fetchone()
        for trigger in ('ndd_maintain_clusters', 'ndd_maintain_clusters_truncate'):
            schema_editor.execute('DROP TRIGGER IF EXISTS %s ON %s' % (trigger, table))
        if row is not None:
            schema, cluster_table = bytes(row[0]).split(b'\x00')[:2]
            schema_editor.execute('DROP TABLE IF EXISTS %s.%s' % (
                _quote_ident(schema.decode()), _quote_ident(cluster_table.decode())))

    def describe(self):
        return 'Keep near-duplicate clusters of %s by %s' % (self.model_name, self.field)

    @property
    def migration_name_fragment(self):
        return 'maintain_clusters_%s' % self.model_name.lower()

    def deconstruct(self):
        kwargs = {'model_name': self.model_name, 'field': self.field}
        if self.id_field != 'id':
            kwargs['id_field'] = self.id_field
        kwargs.update({name: getattr(self, name) for name in self._OPTIONS if getattr(self, name) is not None})
        return type(self).__qualname__, [], kwargs
