"""The values without a server: checks, immutability, the guard's DETAIL."""

import pytest

from ndd import MinHash, MinHashBbit, NearDuplicateError, SimHash
from ndd.opclass import minhash_ops, simhash_ops

EMPTY = 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:empty'


def sketch(values, **settings):
    return MinHash(values, **dict(dict(unit='word', shingle_size=5, seed=0), **settings))


def test_text_and_binary_of_a_built_sketch():
    a = sketch(range(16), filled=[3, 15])
    assert a.to_text() == 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:' + \
        ''.join('%08x' % i for i in range(16)) + ':00008008'
    assert MinHash.from_text(a.to_text()) == a == MinHash.from_binary(bytes(a))
    assert MinHash.from_text(EMPTY).empty and MinHash.from_text(EMPTY).to_text() == EMPTY
    assert MinHash.from_text(EMPTY).values == (0xFFFFFFFF,) * 16


@pytest.mark.parametrize('text', [
    'v2,num_perm=16,unit=word,shingle_size=5,seed=0:empty',          # version
    'v1,num_perm=8,unit=word,shingle_size=5,seed=0:empty',           # num_perm
    'v1,num_perm=16,unit=words,shingle_size=5,seed=0:empty',         # unit
    'v1,num_perm=16,unit=text,shingle_size=2,seed=0:empty',          # arrays have 1
    'v1,num_perm=16,unit=weighted_text,shingle_size=2,seed=0:empty',    # weighted arrays too
    'v1,num_perm=16,unit=weighted_bigint,shingle_size=32,seed=0:empty',
    'v1,num_perm=16,unit=weighted_word,shingle_size=33,seed=0:empty',   # shingles: 1 to 32
    'v1,num_perm=16,unit=weighted_words,shingle_size=1,seed=0:empty',   # unit
    'v1,num_perm=16,unit=weighted,shingle_size=1,seed=0:empty',
    'v1,num_perm=16,unit=_word,shingle_size=1,seed=0:empty',
    'v1,num_perm=16,unit=word,shingle_size=5,seed=0:' + '0' * 127,   # short
    'v1,num_perm=16,unit=word,shingle_size=5,seed=0:' + 'g' * 128,   # not hex
    'v1,num_perm=16,unit=word,shingle_size=5,seed=0:' + '0' * 128 + ':00010000',  # bit 16 of 16
    'v1,num_perm=16,unit=word,shingle_size=5,seed=0:' + '0' * 128 + ':0000ffff',  # all filled
    'v1, num_perm=16,unit=word,shingle_size=5,seed=0:empty',         # blank
])
def test_bad_minhash_text(text):
    with pytest.raises(ValueError):
        MinHash.from_text(text)


def test_bad_binary():
    good = bytes(sketch(range(16)))
    for bad in (good[:-1], good + b'\0', b'\x02' + good[1:], good[:1] + b'\x09' + good[2:],
                good[:3] + b'\x05' + good[4:]):
        with pytest.raises(ValueError):
            MinHash.from_binary(bad)
    bbit = bytes(MinHashBbit([1] * 17, bits=1))
    assert MinHashBbit.from_binary(bbit).values == (1,) * 17
    with pytest.raises(ValueError, match='past'):
        MinHashBbit.from_binary(bbit[:-1] + b'\x03')   # bit 17 of a 17-bit payload


WEIGHTED_UNITS = [('weighted_word', 5, 3), ('weighted_char', 6, 32), ('weighted_text', 7, 1),
                   ('weighted_bigint', 8, 1)]


@pytest.mark.parametrize('unit,code,shingle_size', WEIGHTED_UNITS)
def test_weighted_units(unit, code, shingle_size):
    """A weighted sketch is a minhash with unit 5 to 8 in the source byte."""
    a = sketch(range(16), unit=unit, shingle_size=shingle_size, seed=-3)
    text = 'v1,num_perm=16,unit=%s,shingle_size=%d,seed=-3:' % (unit, shingle_size) + \
        ''.join('%08x' % i for i in range(16))
    assert a.to_text() == text and MinHash.from_text(text) == a
    assert bytes(a)[:4] == bytes([1, code, shingle_size, 0])
    assert MinHash.from_binary(bytes(a)) == a and MinHash.from_binary(bytes(a)).unit == unit
    empty = MinHash.empty_sketch(16, unit=unit, shingle_size=shingle_size)
    assert MinHash.from_text(empty.to_text()) == empty == MinHash.from_binary(bytes(empty))
    b = a.to_bbit(2)
    assert b.unit == unit and MinHashBbit.from_binary(bytes(b)) == b == MinHashBbit.from_text(b.to_text())
    assert bytes(b)[1] == code
    # a weighted sketch and an unweighted one of the same K are not compared
    with pytest.raises(ValueError, match='different settings'):
        a.similarity(sketch(range(16), unit=unit[len('weighted_'):], shingle_size=shingle_size, seed=-3))
    assert a.similarity(sketch([0] * 16, unit=unit, shingle_size=shingle_size, seed=-3)) == 1 / 16


def test_unit_errors_use_the_server_wording():
    wording = ('unit must be word, char, text, bigint, weighted_word, weighted_char, weighted_text '
               'or weighted_bigint')
    with pytest.raises(ValueError, match=wording):
        MinHash.from_text('v1,num_perm=16,unit=weighted_line,shingle_size=1,seed=0:empty')
    with pytest.raises(ValueError, match=wording):
        MinHashBbit([0] * 16, bits=1, unit='weights')
    with pytest.raises(ValueError, match='shingle_size must be 1 for unit weighted_bigint'):
        sketch(range(16), unit='weighted_bigint', shingle_size=2)
    with pytest.raises(ValueError, match='shingle_size must be 1 for unit weighted_text'):
        MinHashBbit.from_text('v1,num_perm=16,unit=weighted_text,shingle_size=4,seed=0,b=1:' + '0' * 16)
    good = bytearray(bytes(sketch(range(16), unit='weighted_text', shingle_size=1)))
    good[2] = 2                                         # shingle_size 2 of an array source
    with pytest.raises(ValueError):
        MinHash.from_binary(bytes(good))
    good[1], good[2] = 0, 1                             # source 0
    with pytest.raises(ValueError, match='unknown unit 0'):
        MinHash.from_binary(bytes(good))


def test_immutable_and_hashable():
    a = sketch(range(16))
    with pytest.raises(AttributeError):
        a.seed = 1
    assert len({a, sketch(range(16)), sketch(range(1, 17))}) == 2


def test_similarity_rules():
    a, b = sketch(range(16)), sketch([0] * 8 + list(range(8, 16)))
    assert a.similarity(b) == 9 / 16 and a.distance(b) == 1 - 9 / 16
    assert MinHash.empty_sketch(16).similarity(MinHash.empty_sketch(16)) == 0.0
    with pytest.raises(ValueError, match='different settings'):
        a.similarity(sketch(range(16), seed=1))
    # b-bit: chance agreements taken out, clipped at 0
    x, y = MinHashBbit([0] * 16, bits=1), MinHashBbit([0] * 8 + [1] * 8, bits=1)
    assert x.similarity(y) == 0.0 and x.similarity(x) == 1.0
    assert MinHashBbit([3] * 16, bits=2).to_text().endswith(':' + '3' * 16)
    assert MinHashBbit([255] * 16, bits=8).to_text().endswith(':' + 'ff' * 16)


def test_simhash():
    assert SimHash(-1) == 2**64 - 1 and SimHash('8000000000000000').to_bigint() == -2**63
    assert SimHash(' 00000000000000FF ') == 255
    assert SimHash(0b1011).hamming_distance(0) == 3
    assert SimHash.from_binary(SimHash(2**63 + 5).to_binary()) == 2**63 + 5
    for bad in ('123', 'xyz0000000000000', 2**64):
        with pytest.raises(ValueError):
            SimHash(bad)


@pytest.mark.parametrize('detail, fields', [
    ('Key (id)=(1) has similarity 0.921875, at least the threshold 0.8.',
     dict(existing_id=1, similarity=0.921875, threshold=0.8, exact=False)),
    ('Key (id)=(1) has exact Jaccard similarity 1, at least the threshold 0.8.',
     dict(existing_id=1, similarity=1.0, exact=True)),
    ('Key (id)=(42) is 2 bits away, within the distance 3.',
     dict(existing_id=42, distance=2, max_distance=3)),
    ('Key (tenant, "Doc Id")=(7, abc) has similarity 0.9, at least the threshold 0.8.',
     dict(existing_id=(7, 'abc'), key={'tenant': '7', 'Doc Id': 'abc'})),
    ('Key ctid (0,3) has similarity 0.9, at least the threshold 0.8.',
     dict(existing_id='(0,3)', key={'ctid': '(0,3)'})),
    ('An existing row has similarity 0.9, at least the threshold 0.8.',
     dict(existing_id=None, similarity=0.9)),
    ("Two of the statement's rows are 1 bits apart, within the distance 3.",
     dict(existing_id=None, within_statement=True, distance=1)),
])
def test_guard_detail(detail, fields):
    error = NearDuplicateError('new row for relation "t" is a near-duplicate of an existing row',
                               detail=detail, **NearDuplicateError.parse_detail(detail))
    for name, value in fields.items():
        assert getattr(error, name) == value


def test_opclass_text():
    assert minhash_ops() == 'minhash_ops'
    assert minhash_ops(threshold=0.75, unit='bigint') == "minhash_ops(threshold = 0.75, unit = 'bigint')"
    assert minhash_ops(unit='weighted_word') == "minhash_ops(unit = 'weighted_word')"
    with pytest.raises(ValueError):
        minhash_ops(unit='weighted')
    assert simhash_ops(max_distance=2, keys='blocks') == "simhash_ops(max_distance = 2, keys = 'blocks')"
    with pytest.raises(ValueError):
        simhash_ops(keys="pairs') --")


def test_as_value():
    from ndd.sketches import as_value
    text = 'v1,num_perm=16,unit=word,shingle_size=5,seed=0:empty'
    assert as_value(MinHash, text) == MinHash.from_text(text)
    assert as_value(SimHash, 5) == 5 and type(as_value(SimHash, 5)) is SimHash
    assert as_value(MinHash, None) is None
    with pytest.raises(TypeError):
        as_value(MinHash, [1, 2, 3])
