"""Client-side values of ndd's types: minhash, minhash_bbit and simhash.

Each class reads and writes the server's text form (the type's input and
output functions) and its binary form (receive and send) byte for byte, and
computes similarity() with the same arithmetic as the server, so a score
computed here equals the score the server returns for the same pair.
"""

import re
import struct

__all__ = ['MinHash', 'MinHashBbit', 'SimHash', 'UNITS', 'ARRAY_UNITS', 'as_value']

# The units a sketch records, numbered as the server stores them (the
# source byte of the binary form, 1 to 8).  The weighted ones are those of
# weighted minhash sketches (weighted_minhash_sketch()), which are ordinary
# minhash values: same forms, same similarity().
UNITS = ('word', 'char', 'text', 'bigint',
         'weighted_word', 'weighted_char', 'weighted_text', 'weighted_bigint')
_UNIT_CODES = {name: code for code, name in enumerate(UNITS, start=1)}
# units of sketches of arrays, whose shingle_size is 1 (MinHashSourceIsArray)
ARRAY_UNITS = ('text', 'bigint', 'weighted_text', 'weighted_bigint')

_FORMAT_VERSION = 1
_NUM_PERM_MIN, _NUM_PERM_MAX = 16, 1024
_SHINGLE_SIZE_MIN, _SHINGLE_SIZE_MAX = 1, 32
_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1
_EMPTY_VALUE = 0xFFFFFFFF       # what the server stores in an empty sketch

_MINHASH_FLAG_EMPTY = 0x01
_MINHASH_FLAG_FILLED = 0x02


def _check_settings(type_name, num_perm, unit, shingle_size, seed):
    """The checks the server's input functions make on a header."""
    if not _NUM_PERM_MIN <= num_perm <= _NUM_PERM_MAX:
        raise ValueError('%s: num_perm must be between %d and %d, not %d'
                         % (type_name, _NUM_PERM_MIN, _NUM_PERM_MAX, num_perm))
    if unit not in _UNIT_CODES:
        raise ValueError('%s: unit must be word, char, text, bigint, weighted_word, weighted_char, '
                         'weighted_text or weighted_bigint, not %r' % (type_name, unit))
    if unit in ARRAY_UNITS:
        if shingle_size != 1:
            raise ValueError('%s: shingle_size must be 1 for unit %s' % (type_name, unit))
    elif not _SHINGLE_SIZE_MIN <= shingle_size <= _SHINGLE_SIZE_MAX:
        raise ValueError('%s: shingle_size must be between %d and %d, not %d'
                         % (type_name, _SHINGLE_SIZE_MIN, _SHINGLE_SIZE_MAX, shingle_size))
    if not _INT32_MIN <= seed <= _INT32_MAX:
        raise ValueError('%s: seed must fit in a 32-bit integer, not %d' % (type_name, seed))


def _settings_text(value):
    return 'num_perm=%d, unit=%s, shingle_size=%d, seed=%d' % (
        value.num_perm, value.unit, value.shingle_size, value.seed)


def _as_text(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data).decode('ascii')
    return data


# v1,num_perm=128,unit=word,shingle_size=5,seed=0:  (the server prints this exact shape)
_HEADER = r'v(?P<version>\d+),num_perm=(?P<num_perm>\d+),unit=(?P<unit>[a-z_]+),' \
          r'shingle_size=(?P<shingle_size>\d+),seed=(?P<seed>-?\d+)'
_MINHASH_TEXT = re.compile(_HEADER + r':(?P<body>.*)\Z', re.S)
_BBIT_TEXT = re.compile(_HEADER + r',b=(?P<bits>\d+):(?P<body>.*)\Z', re.S)
_HEX = re.compile(r'[0-9a-fA-F]*\Z')


class MinHash:
    """A minhash sketch: K 32-bit values and how they were made.

    Weighted minhash sketches (weighted_minhash_sketch()) are MinHash
    values too, with a ``weighted_*`` unit.

    ``values`` holds the K positions; ``filled`` the positions that
    densification filled (a short document leaves bins empty), which the
    server keeps so that unions stay exact.  A sketch of no elements has
    ``empty`` set and, as on the server, every value 0xffffffff.
    """

    __slots__ = ('_version', '_unit', '_shingle_size', '_seed', '_values', '_filled', '_empty')

    def __init__(self, values, *, unit='word', shingle_size=5, seed=0, filled=(), empty=False,
                 version=_FORMAT_VERSION):
        values = tuple(int(v) for v in values)
        if version != _FORMAT_VERSION:
            raise ValueError('minhash: unsupported format version %d' % version)
        _check_settings('minhash', len(values), unit, shingle_size, seed)
        if any(not 0 <= v <= 0xFFFFFFFF for v in values):
            raise ValueError('minhash: every value must fit in 32 unsigned bits')
        filled = frozenset(int(i) for i in filled)
        if empty:
            if filled:
                raise ValueError('minhash: an empty sketch has no filled positions')
            values = (_EMPTY_VALUE,) * len(values)
        elif filled:
            if min(filled) < 0 or max(filled) >= len(values):
                raise ValueError('minhash: filled positions must lie within num_perm')
            if len(filled) == len(values):
                raise ValueError('minhash: the filled positions leave no real position')
        for name, value in (('_version', version), ('_unit', unit), ('_shingle_size', shingle_size),
                            ('_seed', seed), ('_values', values), ('_filled', filled),
                            ('_empty', bool(empty))):
            object.__setattr__(self, name, value)

    @classmethod
    def empty_sketch(cls, num_perm=128, *, unit='word', shingle_size=5, seed=0):
        """The sketch of a document with no shingles, as minhash_sketch('') makes it."""
        return cls((_EMPTY_VALUE,) * num_perm, unit=unit, shingle_size=shingle_size, seed=seed,
                   empty=True)

    def __setattr__(self, name, value):
        raise AttributeError('MinHash values are immutable')

    version = property(lambda self: self._version)
    unit = property(lambda self: self._unit,
                    doc="'word', 'char', 'text', 'bigint', or for a weighted minhash sketch "
                        "'weighted_word', 'weighted_char', 'weighted_text' or 'weighted_bigint'")
    shingle_size = property(lambda self: self._shingle_size)
    seed = property(lambda self: self._seed)
    values = property(lambda self: self._values, doc='the K positions, 32-bit unsigned ints')
    filled = property(lambda self: self._filled, doc='positions filled by densification')
    empty = property(lambda self: self._empty, doc='made from no elements at all')

    @property
    def num_perm(self):
        return len(self._values)

    @property
    def settings(self):
        """How the sketch was made, as minhash_settings() reports it."""
        return {'num_perm': self.num_perm, 'unit': self.unit,
                'shingle_size': self.shingle_size, 'seed': self.seed}

    def _same_settings(self, other, type_name):
        if not isinstance(other, type(self)):
            raise TypeError('cannot compare %s with %s' % (type_name, type(other).__name__))
        if self.settings != other.settings or self.version != other.version:
            raise ValueError('cannot compare %s sketches made with different settings: %s and %s'
                             % (type_name, _settings_text(self), _settings_text(other)))

    def similarity(self, other):
        """Estimated Jaccard resemblance, the fraction of agreeing positions,
        exactly as the server's similarity(minhash, minhash) computes it."""
        self._same_settings(other, 'minhash')
        if self.empty or other.empty:
            return 0.0
        same = sum(a == b for a, b in zip(self._values, other._values))
        return same / self.num_perm

    def distance(self, other):
        """1 - similarity, the server's minhash <-> minhash."""
        return 1.0 - self.similarity(other)

    def to_bbit(self, bits=4):
        """The lowest ``bits`` bits of each position, as minhash_bbit(sketch, b) makes them."""
        if bits not in (1, 2, 4, 8):
            raise ValueError('b must be 1, 2, 4 or 8, not %r' % (bits,))
        mask = (1 << bits) - 1
        values = (0,) * self.num_perm if self.empty else (v & mask for v in self._values)
        return MinHashBbit(values, bits=bits, unit=self.unit, shingle_size=self.shingle_size,
                           seed=self.seed, empty=self.empty)

    # text form: v1,num_perm=K,unit=U,shingle_size=S,seed=N:VALUES[:FILLED]
    def _filled_words(self):
        words = [0] * ((self.num_perm + 31) // 32)
        for i in self._filled:
            words[i // 32] |= 1 << (i % 32)
        return words

    def to_text(self):
        head = 'v%d,num_perm=%d,unit=%s,shingle_size=%d,seed=%d:' % (
            self.version, self.num_perm, self.unit, self.shingle_size, self.seed)
        if self.empty:
            return head + 'empty'
        text = head + ''.join('%08x' % v for v in self._values)
        if self._filled:
            text += ':' + ''.join('%08x' % w for w in self._filled_words())
        return text

    @classmethod
    def from_text(cls, text):
        text = _as_text(text)
        match = _MINHASH_TEXT.match(text)
        if match is None:
            raise ValueError('invalid minhash text: %r' % (text[:80],))
        num_perm = int(match['num_perm'])
        fields = dict(version=int(match['version']), unit=match['unit'],
                      shingle_size=int(match['shingle_size']), seed=int(match['seed']))
        body = match['body']
        if body == 'empty':
            _check_settings('minhash', num_perm, fields['unit'], fields['shingle_size'], fields['seed'])
            return cls((_EMPTY_VALUE,) * num_perm, empty=True, **fields)
        values_hex, _, filled_hex = body.partition(':')
        words = (num_perm + 31) // 32
        if len(values_hex) != 8 * num_perm or not _HEX.match(values_hex):
            raise ValueError('invalid minhash text: the values must be %d groups of 8 hex digits'
                             % num_perm)
        values = [int(values_hex[i:i + 8], 16) for i in range(0, len(values_hex), 8)]
        filled = ()
        if ':' in body:
            if len(filled_hex) != 8 * words or not _HEX.match(filled_hex):
                raise ValueError('invalid minhash text: the filled bitmap must be %d groups of 8 hex digits'
                                 % words)
            filled = cls._positions(
                [int(filled_hex[i:i + 8], 16) for i in range(0, len(filled_hex), 8)], num_perm)
        return cls(values, filled=filled, **fields)

    @staticmethod
    def _positions(words, num_perm):
        positions = [i for i in range(32 * len(words)) if words[i // 32] >> (i % 32) & 1]
        if positions and positions[-1] >= num_perm:
            raise ValueError('minhash: the filled bitmap has bits beyond num_perm')
        return positions

    # binary form (minhash_send): version, unit, shingle_size, flags as bytes,
    # num_perm as uint16, seed as int32, K values as uint32, then the filled
    # bitmap's words when some positions were filled; all big-endian
    _HEADER_STRUCT = struct.Struct('>BBBBHi')

    def to_binary(self):
        flags = _MINHASH_FLAG_EMPTY if self.empty else (_MINHASH_FLAG_FILLED if self._filled else 0)
        data = self._HEADER_STRUCT.pack(self.version, _UNIT_CODES[self.unit], self.shingle_size,
                                        flags, self.num_perm, self.seed)
        data += struct.pack('>%dI' % self.num_perm, *self._values)
        if flags & _MINHASH_FLAG_FILLED:
            words = self._filled_words()
            data += struct.pack('>%dI' % len(words), *words)
        return data

    __bytes__ = to_binary

    @classmethod
    def from_binary(cls, data):
        data = bytes(data)
        header = cls._HEADER_STRUCT
        if len(data) < header.size:
            raise ValueError('invalid minhash binary: %d bytes is too short' % len(data))
        version, unit_code, shingle_size, flags, num_perm, seed = header.unpack_from(data)
        if unit_code not in range(1, len(UNITS) + 1):
            raise ValueError('invalid minhash binary: unknown unit %d' % unit_code)
        if flags not in (0, _MINHASH_FLAG_EMPTY, _MINHASH_FLAG_FILLED):
            raise ValueError('invalid minhash binary: invalid flags %d' % flags)
        words = (num_perm + 31) // 32 if flags & _MINHASH_FLAG_FILLED else 0
        if len(data) != header.size + 4 * (num_perm + words):
            raise ValueError('invalid minhash binary: %d bytes for num_perm %d' % (len(data), num_perm))
        values = struct.unpack_from('>%dI' % num_perm, data, header.size)
        fields = dict(version=version, unit=UNITS[unit_code - 1], shingle_size=shingle_size, seed=seed)
        if flags & _MINHASH_FLAG_EMPTY:
            # the server ignores the values an empty sketch carries
            return cls.empty_sketch(num_perm, **{k: fields[k] for k in ('unit', 'shingle_size', 'seed')})
        filled = ()
        if words:
            filled = cls._positions(struct.unpack_from('>%dI' % words, data, header.size + 4 * num_perm),
                                    num_perm)
        return cls(values, filled=filled, **fields)

    def _key(self):
        return (self.version, self.unit, self.shingle_size, self.seed, self._values,
                self._filled, self._empty)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        state = 'empty' if self.empty else '%d filled' % len(self._filled)
        return '<%s %s, %s>' % (type(self).__name__, _settings_text(self), state)


_BBIT_FLAG_EMPTY = 0x01


class MinHashBbit:
    """A b-bit minhash: the lowest b bits (1, 2, 4 or 8) of each position of
    a minhash, and the sketch's settings."""

    __slots__ = ('_version', '_unit', '_shingle_size', '_seed', '_bits', '_values', '_empty')

    def __init__(self, values, *, bits, unit='word', shingle_size=5, seed=0, empty=False,
                 version=_FORMAT_VERSION):
        values = tuple(int(v) for v in values)
        if version != _FORMAT_VERSION:
            raise ValueError('minhash_bbit: unsupported format version %d' % version)
        _check_settings('minhash_bbit', len(values), unit, shingle_size, seed)
        if bits not in (1, 2, 4, 8):
            raise ValueError('minhash_bbit: b must be 1, 2, 4 or 8, not %r' % (bits,))
        if any(not 0 <= v < 1 << bits for v in values):
            raise ValueError('minhash_bbit: every value must fit in %d bits' % bits)
        if empty:
            values = (0,) * len(values)      # the server stores zeros
        for name, value in (('_version', version), ('_unit', unit), ('_shingle_size', shingle_size),
                            ('_seed', seed), ('_bits', bits), ('_values', values),
                            ('_empty', bool(empty))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError('MinHashBbit values are immutable')

    version = property(lambda self: self._version)
    unit = property(lambda self: self._unit)
    shingle_size = property(lambda self: self._shingle_size)
    seed = property(lambda self: self._seed)
    bits = property(lambda self: self._bits, doc='b: bits kept per position')
    values = property(lambda self: self._values, doc='the K positions, b bits each')
    empty = property(lambda self: self._empty)

    @property
    def num_perm(self):
        return len(self._values)

    @property
    def settings(self):
        return {'num_perm': self.num_perm, 'unit': self.unit,
                'shingle_size': self.shingle_size, 'seed': self.seed, 'b': self.bits}

    def similarity(self, other):
        """Estimated Jaccard resemblance corrected for chance collisions,
        (P - 2^-b) / (1 - 2^-b) clipped to [0, 1], as the server computes it."""
        if not isinstance(other, MinHashBbit):
            raise TypeError('cannot compare minhash_bbit with %s' % type(other).__name__)
        if self.settings != other.settings or self.version != other.version:
            raise ValueError('cannot compare minhash_bbit sketches made with different settings: '
                             '%s, b=%d and %s, b=%d' % (_settings_text(self), self.bits,
                                                       _settings_text(other), other.bits))
        if self.empty or other.empty:
            return 0.0
        k = self.num_perm
        differing = sum(a != b for a, b in zip(self._values, other._values))
        chance = 1.0 / (1 << self.bits)
        p = (k - differing) / k
        r = (p - chance) / (1.0 - chance)
        return max(0.0, min(1.0, r))

    # text form: v1,...,seed=N,b=B:VALUES, one hex digit per position (two for b = 8)
    def to_text(self):
        head = 'v%d,num_perm=%d,unit=%s,shingle_size=%d,seed=%d,b=%d:' % (
            self.version, self.num_perm, self.unit, self.shingle_size, self.seed, self.bits)
        if self.empty:
            return head + 'empty'
        digit = '%02x' if self.bits == 8 else '%x'
        return head + ''.join(digit % v for v in self._values)

    @classmethod
    def from_text(cls, text):
        text = _as_text(text)
        match = _BBIT_TEXT.match(text)
        if match is None:
            raise ValueError('invalid minhash_bbit text: %r' % (text[:80],))
        num_perm, bits = int(match['num_perm']), int(match['bits'])
        fields = dict(version=int(match['version']), unit=match['unit'], bits=bits,
                      shingle_size=int(match['shingle_size']), seed=int(match['seed']))
        body = match['body']
        if body == 'empty':
            return cls((0,) * num_perm, empty=True, **fields)
        width = 2 if bits == 8 else 1
        if len(body) != width * num_perm or not _HEX.match(body):
            raise ValueError('invalid minhash_bbit text: the values must be %d hex digits'
                             % (width * num_perm))
        return cls([int(body[i:i + width], 16) for i in range(0, len(body), width)], **fields)

    # binary form (minhash_bbit_send): version, unit, shingle_size, flags, b
    # as bytes, num_perm as uint16, seed as int32, then (unless empty) the
    # payload: position i at bit i*b, from the low bits of each byte
    _HEADER_STRUCT = struct.Struct('>BBBBBHi')

    def _payload(self):
        packed = 0
        for i, v in enumerate(self._values):
            packed |= v << (i * self.bits)
        return packed.to_bytes((self.num_perm * self.bits + 7) // 8, 'little')

    def to_binary(self):
        data = self._HEADER_STRUCT.pack(self.version, _UNIT_CODES[self.unit], self.shingle_size,
                                        _BBIT_FLAG_EMPTY if self.empty else 0, self.bits,
                                        self.num_perm, self.seed)
        return data if self.empty else data + self._payload()

    __bytes__ = to_binary

    @classmethod
    def from_binary(cls, data):
        data = bytes(data)
        header = cls._HEADER_STRUCT
        if len(data) < header.size:
            raise ValueError('invalid minhash_bbit binary: %d bytes is too short' % len(data))
        version, unit_code, shingle_size, flags, bits, num_perm, seed = header.unpack_from(data)
        if unit_code not in range(1, len(UNITS) + 1):
            raise ValueError('invalid minhash_bbit binary: unknown unit %d' % unit_code)
        if flags not in (0, _BBIT_FLAG_EMPTY):
            raise ValueError('invalid minhash_bbit binary: invalid flags %d' % flags)
        if bits not in (1, 2, 4, 8):
            raise ValueError('invalid minhash_bbit binary: b must be 1, 2, 4 or 8, not %d' % bits)
        fields = dict(version=version, unit=UNITS[unit_code - 1], shingle_size=shingle_size,
                      seed=seed, bits=bits)
        payload = data[header.size:]
        if flags & _BBIT_FLAG_EMPTY:
            if payload:
                raise ValueError('invalid minhash_bbit binary: an empty sketch has no payload')
            return cls((0,) * num_perm, empty=True, **fields)
        if len(payload) != (num_perm * bits + 7) // 8:
            raise ValueError('invalid minhash_bbit binary: %d payload bytes for num_perm %d, b %d'
                             % (len(payload), num_perm, bits))
        packed = int.from_bytes(payload, 'little')
        if packed >> (num_perm * bits):
            raise ValueError('invalid minhash_bbit binary: bits set past num_perm * b')
        mask = (1 << bits) - 1
        return cls([(packed >> (i * bits)) & mask for i in range(num_perm)], **fields)

    def _key(self):
        return (self.version, self.unit, self.shingle_size, self.seed, self.bits, self._values,
                self._empty)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return '<%s %s, b=%d%s>' % (type(self).__name__, _settings_text(self), self.bits,
                                    ', empty' if self.empty else '')


class SimHash(int):
    """A simhash fingerprint: a Python int from 0 to 2**64 - 1, the unsigned
    value of its 64 bits (the order of the server's text form).

    Values loaded from the server are SimHash instances, so they go back as
    simhash parameters; wrap a plain int in SimHash to send it as one.
    """

    __slots__ = ()

    def __new__(cls, value=0):
        if isinstance(value, (str, bytes)):
            return cls.from_text(value)
        value = int(value)
        if value < 0:
            value += 1 << 64        # a bigint's two's complement, as bigint::simhash reads it
        if not 0 <= value < 1 << 64:
            raise ValueError('a simhash is 64 bits: %d does not fit' % value)
        return super().__new__(cls, value)

    def hamming_distance(self, other):
        """Number of differing bits, the server's hamming_distance()."""
        return bin(int(self) ^ int(SimHash(other))).count('1')

    def to_text(self):
        return '%016x' % self

    @classmethod
    def from_text(cls, text):
        text = _as_text(text).strip()
        if len(text) != 16 or not _HEX.match(text):
            raise ValueError('invalid simhash text: %r is not 16 hex digits' % (text,))
        return super().__new__(cls, int(text, 16))

    def to_binary(self):
        return int(self).to_bytes(8, 'big')

    @classmethod
    def from_binary(cls, data):
        data = bytes(data)
        if len(data) != 8:
            raise ValueError('invalid simhash binary: %d bytes, not 8' % len(data))
        return super().__new__(cls, int.from_bytes(data, 'big'))

    def to_bigint(self):
        """The same 64 bits as a signed bigint, as simhash::bigint shows them."""
        return self - (1 << 64) if self >= 1 << 63 else int(self)

    def __repr__(self):
        return 'SimHash(0x%016x)' % self


def as_value(value_class, value):
    """value as an instance of value_class: itself, parsed from its text
    form, or (for SimHash) an int; None stays None."""
    if value is None or isinstance(value, value_class):
        return value
    if isinstance(value, (str, bytes)):
        return value_class.from_text(value)
    if value_class is SimHash and isinstance(value, int) and not isinstance(value, bool):
        return SimHash(value)
    raise TypeError('expected ndd.%s or its text form, not %s' % (value_class.__name__, type(value).__name__))
