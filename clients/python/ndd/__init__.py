"""Python client of ndd, near-duplicate detection in PostgreSQL.

The values (MinHash, MinHashBbit, SimHash) and the guard's error need
nothing but the standard library; the driver and ORM integrations live in
ndd.psycopg, ndd.psycopg2, ndd.sqlalchemy and ndd.django, which import their
own library.
"""

from .errors import NearDuplicateError, near_duplicates_raised
from .sketches import MinHash, MinHashBbit, SimHash

__version__ = '0.1.0'

__all__ = ['MinHash', 'MinHashBbit', 'SimHash', 'NearDuplicateError', 'near_duplicates_raised']
