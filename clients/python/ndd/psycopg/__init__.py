"""ndd's types for psycopg 3: register_ndd(connection).

After registration, minhash and minhash_bbit columns load as ndd.MinHash and
ndd.MinHashBbit, simhash columns as ndd.SimHash (an int), in text and in
binary results; those objects are sent as parameters of their own type
(text or binary, %s / %t / %b), so no cast is needed in the query.
"""

from psycopg import errors as _errors
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo

from ..sketches import MinHash, MinHashBbit, SimHash

__all__ = ['register_ndd', 'register_ndd_async']

_TYPES = (('minhash', MinHash), ('minhash_bbit', MinHashBbit), ('simhash', SimHash))


def _adapters_for(value_class, oid):
    """Text and binary dumpers and loaders of one type, bound to its oid."""
    name = value_class.__name__

    class TextDumper(Dumper):
        format = Format.TEXT

        def dump(self, obj):
            return obj.to_text().encode('ascii')

    class BinaryDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj):
            return obj.to_binary()

    class TextLoader(Loader):
        format = Format.TEXT

        def load(self, data):
            return value_class.from_text(bytes(data))

    class BinaryLoader(Loader):
        format = Format.BINARY

        def load(self, data):
            return value_class.from_binary(bytes(data))

    for adapter in (TextDumper, BinaryDumper, TextLoader, BinaryLoader):
        adapter.__name__ = adapter.__qualname__ = name + adapter.__name__
    TextDumper.oid = BinaryDumper.oid = oid
    return TextDumper, BinaryDumper, TextLoader, BinaryLoader


def _register(context, infos):
    missing = [name for (name, _), info in zip(_TYPES, infos) if info is None]
    if missing:
        raise _errors.ProgrammingError(
            'ndd types not found in the database: %s (run CREATE EXTENSION ndd, '
            'or put its schema on the search_path)' % ', '.join(missing))
    for (_, value_class), info in zip(_TYPES, infos):
        info.register(context)      # arrays of the type, too
        text_dumper, binary_dumper, text_loader, binary_loader = _adapters_for(value_class, info.oid)
        # the text dumper last: %s then sends text, readable in logs
        context.adapters.register_dumper(value_class, binary_dumper)
        context.adapters.register_dumper(value_class, text_dumper)
        context.adapters.register_loader(info.oid, text_loader)
        context.adapters.register_loader(info.oid, binary_loader)


def register_ndd(context):
    """Register ndd's types on a connection or cursor (psycopg 3)."""
    _register(context, [TypeInfo.fetch(context, name) for name, _ in _TYPES])


async def register_ndd_async(context):
    """register_ndd for an AsyncConnection."""
    _register(context, [await TypeInfo.fetch(context, name) for name, _ in _TYPES])
