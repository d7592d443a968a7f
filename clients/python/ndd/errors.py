"""The insert guard's rejection, as a Python exception.

ndd_reject_near_duplicates raises SQLSTATE 23505 (unique_violation) with
the message 'new row for relation "t" is a near-duplicate of an existing
row', the table, schema and column in the error fields, and a DETAIL such as

    Key (id)=(1) has similarity 0.921875, at least the threshold 0.8.
    Key (id)=(1) is 2 bits away, within the distance 3.
    Key (id)=(1) has exact Jaccard similarity 1, at least the threshold 0.8.
    An existing row has similarity ...          (a row the writer may not read)
    Two of the statement's rows have similarity ...   (a statement-level check)

NearDuplicateError.from_exception() reads that from any driver's error
(psycopg, psycopg2, or Django's wrapper around them).
"""

import contextlib
import re

__all__ = ['NearDuplicateError', 'near_duplicates_raised']

_GUARD_SQLSTATE = '23505'
_GUARD_MESSAGE = re.compile(r'new row for relation "(?P<table>.*)" is a near-duplicate of an existing row')

# who (the key shown, or a phrase) and the score, for each DETAIL wording
_DETAILS = [
    re.compile(r'(?P<who>.+) (?:has|have) (?P<exact>exact Jaccard )?similarity (?P<score>\S+), '
               r'at least the threshold (?P<threshold>\S+)\.\Z', re.S),
    re.compile(r'(?P<who>.+) (?:is|are) (?P<distance>\d+) bits (?:away|apart), '
               r'within the distance (?P<max_distance>\d+)\.\Z', re.S),
]
_PRIMARY_KEY = re.compile(r'\((?P<columns>.*)\)=\((?P<values>.*)\)\Z', re.S)


def _integer_or_text(text):
    return int(text) if re.fullmatch(r'-?\d+', text) else text


class NearDuplicateError(Exception):
    """A row was rejected by ndd's insert guard as a near-duplicate.

    ``existing_id``: the primary key of the row it resembles (an int for an
    integer key, a tuple for a key of several columns, or None when the guard
    did not name the row); ``key``: the key's columns and values as text;
    ``similarity`` or ``distance``; ``threshold`` or ``max_distance``;
    ``table``, ``schema``, ``column``; ``detail`` and ``sqlstate`` as sent.
    """

    def __init__(self, message, *, detail=None, table=None, schema=None, column=None,
                 key=None, similarity=None, exact=False, threshold=None, distance=None,
                 max_distance=None, within_statement=False, sqlstate=_GUARD_SQLSTATE):
        super().__init__(message if detail is None else '%s\nDETAIL:  %s' % (message, detail))
        self.message = message
        self.detail = detail
        self.table = table
        self.schema = schema
        self.column = column
        self.key = key or {}
        self.similarity = similarity
        self.exact = exact
        self.threshold = threshold
        self.distance = distance
        self.max_distance = max_distance
        self.within_statement = within_statement
        self.sqlstate = sqlstate

    @property
    def existing_id(self):
        values = [_integer_or_text(v) for v in self.key.values()]
        if not values:
            return None
        return values[0] if len(values) == 1 else tuple(values)

    @classmethod
    def from_exception(cls, exc):
        """The NearDuplicateError an exception carries, or None when it is
        not the guard's rejection.  Follows __cause__, so Django's
        IntegrityError (which wraps the driver's) works too."""
        seen = set()
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            if isinstance(exc, cls):
                return exc
            found = cls._from_driver_error(exc)
            if found is not None:
                return found
            exc = exc.__cause__ or exc.__context__
        return None

    @classmethod
    def _from_driver_error(cls, exc):
        # psycopg has .sqlstate, psycopg2 .pgcode; both have .diag
        sqlstate = getattr(exc, 'sqlstate', None) or getattr(exc, 'pgcode', None)
        diag = getattr(exc, 'diag', None)
        if sqlstate != _GUARD_SQLSTATE or diag is None:
            return None
        message = diag.message_primary or ''
        if not _GUARD_MESSAGE.fullmatch(message):
            return None
        detail = diag.message_detail
        fields = cls.parse_detail(detail) if detail else {}
        return cls(message, detail=detail, table=diag.table_name, schema=diag.schema_name,
                   column=diag.column_name, **fields)

    @staticmethod
    def parse_detail(detail):
        """The fields of a guard DETAIL, as keyword arguments of the class."""
        for pattern in _DETAILS:
            match = pattern.match(detail)
            if match is None:
                continue
            parts = match.groupdict()
            fields = {}
            who = parts['who']
            if who == "Two of the statement's rows":
                fields['within_statement'] = True
            elif who.startswith('Key '):
                fields['key'] = _parse_key(who[len('Key '):])
            if parts.get('score') is not None:
                fields['similarity'] = float(parts['score'])
                fields['threshold'] = float(parts['threshold'])
                fields['exact'] = parts['exact'] is not None
            else:
                fields['distance'] = int(parts['distance'])
                fields['max_distance'] = int(parts['max_distance'])
            return fields
        return {}


def _parse_key(shown):
    """'(id)=(42)' as {'id': '42'}; a table without a primary key shows its
    ctid ('ctid (0,1)'), kept as {'ctid': '(0,1)'}."""
    match = _PRIMARY_KEY.match(shown)
    if match is None:
        return {'ctid': shown.rsplit('ctid ', 1)[-1]} if 'ctid ' in shown else {'key': shown}
    columns = match['columns'].split(', ')
    values = match['values'].split(', ')
    if len(columns) != len(values):
        # a text key with ", " in it: keep the values as shown
        return {match['columns']: match['values']}
    return {c.strip('"'): v for c, v in zip(columns, values)}


@contextlib.contextmanager
def near_duplicates_raised():
    """Turn the guard's rejection, from any driver, into NearDuplicateError
    (raised from the original); other errors pass unchanged."""
    try:
        yield
    except Exception as exc:
        found = NearDuplicateError.from_exception(exc)
        if found is None or found is exc:
            raise
        raise found from exc
