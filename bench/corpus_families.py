#!/usr/bin/env python3
"""corpus_families.py: documents in families of 4 near-duplicates.

Writes --docs rows of tab-separated text, ready for COPY (no header):

    id  body

Ids run from 1; family k (from 0) holds ids 4k+1 to 4k+4.  Each family
has a base text of --words words (60 by default), which is never written
itself.  Member i (0 to 3) is the base with its word at position
words - 4 + i replaced by another word, so the four members differ from
the base, and from each other, only in the last four words.  body is one
line of lower-case ASCII words separated by single spaces.

The words.  A vocabulary of --vocab made-up words (syllables drawn at
random, all distinct) with Zipf-Mandelbrot weights 1 / (rank + 2.7): a few
words are very common, most are rare, as in running text.  Base words and
replacements are drawn independently from it.

The resemblance within a family.  A document of n words has n - s + 1
shingles of s words.  Replacing word p changes the shingles that cover p:
min(p, n - s) - max(0, p - s + 1) + 1 of them.  Two members that changed
positions p and q share every shingle that covers neither, and no other
(barring chance), so their Jaccard is (m - u) / (m + u), with m the number
of shingles and u the number covering p or q.  At 60 words, that is
0.871 to 0.933 with 3-word shingles and 0.867 to 0.931 with 5-word
shingles (what minhash_sketch() and jaccard() use by default): all six
pairs of every full family are above 0.8.  Two families share nothing but
chance shingles of common words.  --stats computes all of this exactly.

The output depends only on --seed, --words and --vocab: the first N rows
of a corpus are the corpus of N documents (families are drawn one after
the other), and the same arguments give the same bytes on any machine
with Python 3.

    python3 bench/corpus_families.py --docs 1000000 > /tmp/families.tsv
    python3 bench/corpus_families.py --docs 10000 --stats
"""

import argparse
import itertools
import random
import statistics
import sys
from collections import defaultdict

FAMILY = 4
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "st", "er", "an", "or"]


def vocabulary(rng, size):
    """size distinct made-up words, 2 to 4 syllables, in rank order"""
    words, seen = [], set()
    while len(words) < size:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def families(seed, words, vocab_size):
    """yields the members of each family, one family after the other"""
    rng = random.Random(seed)
    vocab = vocabulary(rng, vocab_size)
    cum = list(itertools.accumulate(1.0 / (r + 2.7) for r in range(vocab_size)))
    while True:
        base = rng.choices(vocab, cum_weights=cum, k=words)
        members = []
        for i in range(FAMILY):
            pos = words - FAMILY + i
            member = list(base)
            while member[pos] == base[pos]:
                member[pos] = rng.choices(vocab, cum_weights=cum)[0]
            members.append(member)
        yield members


def documents(args):
    """(id, words) of the first args.docs documents"""
    ids = itertools.count(1)
    for members in families(args.seed, args.words, args.vocab):
        for member in members:
            doc_id = next(ids)
            if doc_id > args.docs:
                return
            yield doc_id, member


def shingles(words, size):
    if len(words) < size:
        return {tuple(words)}
    return {tuple(words[i:i + size]) for i in range(len(words) - size + 1)}


def jaccard(a, b):
    return len(a & b) / len(a | b)


def expected_range(words, size):
    """the Jaccard of two members that changed positions p and q, over all p, q"""
    m = words - size + 1

    def covering(p):
        return set(range(max(0, p - size + 1), min(p, m - 1) + 1))

    last = range(words - FAMILY, words)
    values = [(m - len(covering(p) | covering(q))) / (m + len(covering(p) | covering(q)))
              for p, q in itertools.combinations(last, 2)]
    return min(values), max(values)


def cross_family_max(sets, family_of):
    """the largest exact Jaccard between documents of different families,
    over every pair that shares a shingle (an inverted index, no sampling)"""
    postings = defaultdict(list)
    for doc, s in enumerate(sets):
        for sh in s:
            postings[sh].append(doc)
    shared = defaultdict(int)
    for docs in postings.values():
        for a, b in itertools.combinations(docs, 2):
            if family_of[a] != family_of[b]:
                shared[a, b] += 1
    best, at_08 = 0.0, 0
    for (a, b), n in shared.items():
        j = n / (len(sets[a]) + len(sets[b]) - n)
        best = max(best, j)
        at_08 += j >= 0.8
    return best, at_08, len(shared)


def stats(args):
    docs = list(documents(args))
    family_of = [(doc_id - 1) // FAMILY for doc_id, _ in docs]
    print("documents %d, families %d (%d full), %d words a document, vocabulary %d, seed %d"
          % (len(docs), family_of[-1] + 1, len(docs) // FAMILY, args.words, args.vocab, args.seed))
    for size in (3, 5):
        sets = [shingles(w, size) for _, w in docs]
        within = [jaccard(sets[a], sets[b])
                  for f in range(0, len(sets), FAMILY)
                  for a, b in itertools.combinations(range(f, min(f + FAMILY, len(sets))), 2)]
        lo, hi = expected_range(args.words, size)
        best, cross_08, cross_pairs = cross_family_max(sets, family_of)
        print("%d-word shingles: expected J within a family %.3f to %.3f; measured on %d pairs: "
              "min %.3f, median %.3f, max %.3f; pairs with J >= 0.8: %d"
              % (size, lo, hi, len(within), min(within), statistics.median(within), max(within),
                 sum(j >= 0.8 for j in within)))
        print("%d-word shingles: across families, %d pairs share a shingle; largest J %.3f; "
              "pairs with J >= 0.8: %d" % (size, cross_pairs, best, cross_08))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=10000, help="documents to write (default 10000)")
    p.add_argument("--words", type=int, default=60, help="words a document (default 60)")
    p.add_argument("--vocab", type=int, default=30000, help="words in the vocabulary (default 30000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--stats", action="store_true",
                   help="write no documents: check the resemblance within and across families "
                        "on them, exactly, and print it")
    args = p.parse_args()
    if args.docs < 1 or args.words < FAMILY + 1 or args.vocab < 2:
        p.error("--docs must be at least 1, --words at least %d, --vocab at least 2" % (FAMILY + 1))
    if args.stats:
        stats(args)
        return
    out = sys.stdout
    try:
        for doc_id, words in documents(args):
            out.write("%d\t%s\n" % (doc_id, " ".join(words)))
        out.flush()
    except BrokenPipeError:
        # a reader that stopped early (head): no traceback, and none at exit
        sys.stdout = None


if __name__ == "__main__":
    main()
