"""Deterministic test data: documents and near-duplicates of them."""

import random

_WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india',
          'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo',
          'sierra', 'tango', 'uniform', 'victor', 'whiskey', 'xray', 'yankee', 'zulu']


def document(rng, length):
    return ' '.join(rng.choice(_WORDS) + str(rng.randrange(40)) for _ in range(length))


def near_copy(rng, doc, changes):
    """doc with `changes` words replaced."""
    words = doc.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = 'changed%d' % rng.randrange(1000)
    return ' '.join(words)


def documents(seed, count, length=(1, 60)):
    """count documents of 1 to 60 words: originals, and near copies of
    earlier ones, with a few empty ones."""
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        if i % 17 == 16:
            docs.append('')
        elif docs and rng.random() < 0.4:
            base = rng.choice([d for d in docs if d] or ['x'])
            docs.append(near_copy(rng, base, rng.randrange(0, 4)))
        else:
            docs.append(document(rng, rng.randint(*length)))
    return docs


def pairs(seed, count, universe):
    """count index pairs among `universe` items, neighbours included (near
    copies tend to follow their originals)."""
    rng = random.Random(seed)
    out = [(i, i + 1) for i in range(min(count // 2, universe - 1))]
    while len(out) < count:
        out.append((rng.randrange(universe), rng.randrange(universe)))
    return out
