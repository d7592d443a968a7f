#!/usr/bin/env python3
"""corpus.py: a benchmark corpus with planted near-duplicates.

Writes --docs rows of tab-separated text, ready for COPY (no header):

    id  family  edit_rate  text

Ids run from 1.  A base document is its own family (family = id); when it
has edited copies, they follow it at the next ids with the base's id as
their family.  edit_rate is the share of the base's words that were edited
(0 for bases).  text is one line of words separated by single spaces,
without tabs or backslashes.

Where the words come from.  Only files every Debian 12 machine has, so the
benchmarks need nothing outside the repository: the licence texts of
base-files (/usr/share/common-licenses/*) and the copyright file of each
installed package (/usr/share/doc/*/copyright, which Debian's policy
requires and which even the "slim" images keep).  Manual pages are not
used: rendering them needs groff, and minimal images drop them.

  1. Each source file of 50 words or more becomes a base as it is, cut to
     its first 2,000 words; files that are byte for byte the same as an
     earlier one (packages built from one source share their copyright
     file) are left out.  Many files quote the same licence or differ in
     a line or two, so these bases bring the natural near-duplicates of
     real data: pairs of different families whose resemblance nobody
     planted.
  2. Then, as many bases as needed are assembled from passages: every
     paragraph of the sources, once (repeats across files are dropped, as
     are those that differ only in case, spacing or punctuation), cut
     into passages of 150 to 450 characters at a sentence end where there
     is one.
     A base takes passages at random until it is longer than 1,500
     characters plus a log-normal draw (median 1,350, sigma 0.8): 3.5 KB
     on average, 3 KB in the median.  Two such bases seldom share more
     than a passage or two, so they are not near-duplicates of each other.
  3. Half the bases, chosen at random, get --variants edited copies.  Each
     copy aims at a resemblance R to its base, drawn from 1, 0.95, 0.9,
     0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3: the Jaccard resemblance of
     the two documents' sets of 5-word shingles, which is what jaccard()
     returns by default.  An edit replaces a word, removes one, or puts a
     new one in after it (equally likely; new words come from the sources'
     vocabulary), at positions drawn without repeats; edits_for() works out
     how many edits leave R.  A quarter of the copies also get a line of
     boilerplate at the start or at the end, which lowers R a little more.
     On the 12,000 copies of a 20,000-document corpus, the mean of
     jaccard() for each R was between 0.012 below R and 0.001 above it,
     and 88% of the copies were within 0.04 of their R.  That is close,
     not exact: score against jaccard(), and count on family only to say
     which pairs were planted.

--base-chars N makes short documents instead (bench/scale.sh uses it, so
that ten million of them fit on the disk): every base, the whole source
files included, is cut or assembled to about N characters (N to N plus a
passage, so about N + 300 on average), and the copies are edited as above.

The output depends on --seed, --docs, --variants, --base-chars and the
source files:
the same installed packages give the same corpus.  --key prints a digest
of all of these (and of this program), so a caller can tell whether a
corpus it wrote before is still the one it would write now.

Examples:
    python3 bench/corpus.py --docs 20000 --out /tmp/c20k.tsv
    python3 bench/corpus.py --docs 1000000 --variants 8 --out /tmp/c1m.tsv
"""
import argparse
import glob
import hashlib
import math
import os
import random
import re
import sys

SOURCE_GLOBS = ["/usr/share/common-licenses/*", "/usr/share/doc/*/copyright"]
MIN_WORDS = 50          # shorter sources are left out
MAX_REAL_WORDS = 2000   # a source used whole as a base is cut to this
PASSAGE_MIN, PASSAGE_MAX = 150, 450  # characters
# a base's length in characters: BASE_MIN plus a log-normal draw, at most BASE_MAX
BASE_MIN, BASE_MEDIAN, BASE_SIGMA, BASE_MAX = 1500, 1350, 0.8, 30000
RESEMBLANCE = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.4, 0.3]
SHINGLE = 5
BOILERPLATE_SHARE = 0.25
# Lines a copy may gain, as a mirror, a mailing list or a printout adds them.
BOILERPLATE = [
    "Mirrored by {site} on {date}. The original may have changed since then.",
    "Sent to the {site} users list on {date}; replies go to the list.",
    "Printed from {site} on {date}. Check the web site for the current text.",
    "Archived copy kept by {site}, last fetched {date}. Report broken links to the archive team.",
    "Note from {site}: this copy is provided as is, without support, as of {date}.",
]
SITES = ["files.example.net", "ftp.example.org", "docs.example.com",
         "archive.example.edu", "pkg.example.io", "lists.example.info"]
SENTENCE_END = re.compile(r"[.;:!?]$")
TOKEN = re.compile(r"[^\W_]+")        # letters and digits, as ndd's words


def clean_words(text):
    """Words of a text, without the characters COPY's text format reserves."""
    return text.replace("\\", " ").replace("\x00", " ").split()


def load_sources(digest):
    """The source files' words and their paragraphs, each file once."""
    files, paragraphs, seen_path, seen_file, seen_par = [], [], set(), set(), set()
    for pattern in SOURCE_GLOBS:
        for path in sorted(glob.glob(pattern)):
            real = os.path.realpath(path)
            if real in seen_path or not os.path.isfile(real):
                continue
            seen_path.add(real)
            try:
                with open(real, "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            sha = hashlib.sha256(raw).digest()
            digest.update(path.encode() + b"\0" + sha)
            if sha in seen_file:        # another package's copy of the same file
                continue
            seen_file.add(sha)
            text = raw.decode("utf-8", "replace")
            words = clean_words(text)
            if len(words) < MIN_WORDS:
                continue
            files.append(words[:MAX_REAL_WORDS])
            for par in re.split(r"\n[ \t]*\n", text):
                pw = clean_words(par)
                key = " ".join(TOKEN.findall(par.lower()))
                if len(pw) >= 5 and key not in seen_par:
                    seen_par.add(key)
                    paragraphs.append(pw)
    return files, paragraphs


def passages_of(paragraphs, rng):
    """Cut paragraphs into passages of PASSAGE_MIN..PASSAGE_MAX characters,
    each ending at the first sentence end past a length drawn between the
    two, or at PASSAGE_MAX."""
    out = []
    for pw in paragraphs:
        piece, size, want = [], 0, rng.randint(PASSAGE_MIN, PASSAGE_MAX)
        for w in pw:
            piece.append(w)
            size += len(w) + 1
            if size >= PASSAGE_MAX or (size >= want and SENTENCE_END.search(w)):
                out.append(piece)
                piece, size, want = [], 0, rng.randint(PASSAGE_MIN, PASSAGE_MAX)
        if piece:
            out.append(piece)
    return out


def cut_to(words, chars):
    """The first words of a list, up to about chars characters."""
    size = -1
    for i, w in enumerate(words):
        size += len(w) + 1
        if size >= chars:
            return words[:i + 1]
    return words


def edits_for(resemblance, words, tokens):
    """How many edits leave about `resemblance` of the shingles.

    ndd splits words at punctuation ("a.b@c.org" is 4 tokens), so a word
    is m = tokens / words tokens on average.  Replacing or removing one
    changes the m + 4 shingles that cover its tokens, putting a word in
    changes 4: D = (2 (m + 4) + 4) / 3 on average.  Replacing or putting in
    makes 5 new ones, removing makes 4: C = 14 / 3.  k edits at random
    among S shingles, x = k / S, keep about exp(-x D) of them (nearby
    edits hit the same shingles) and add about 1 - exp(-x C) new ones, so
    R = exp(-x D) / (2 - exp(-x C)), solved here for x by bisection.
    """
    if resemblance >= 1 or not words:
        return 0
    m = tokens / len(words)
    lost = (2 * (m + SHINGLE - 1) + SHINGLE - 1) / 3
    made = (2 * SHINGLE + SHINGLE - 1) / 3
    lo, hi = 0.0, 4.0
    for _ in range(30):
        x = (lo + hi) / 2
        if math.exp(-x * lost) / (2 - math.exp(-x * made)) > resemblance:
            lo = x
        else:
            hi = x
    s = max(tokens - SHINGLE + 1, 1)
    return min(len(words), round(lo * s))


def edited(words, k, vocab, rng):
    """A copy of words with k edits at distinct positions, and maybe a line
    of boilerplate."""
    out, prev = [], 0
    for p in sorted(rng.sample(range(len(words)), k)):
        out.extend(words[prev:p])
        op = rng.randrange(3)
        if op == 1:                     # replaced
            out.append(vocab[rng.randrange(len(vocab))])
        elif op == 2:                   # a word put in after it
            out.append(words[p])
            out.append(vocab[rng.randrange(len(vocab))])
        prev = p + 1                    # op 0: removed
    out.extend(words[prev:])
    if rng.random() < BOILERPLATE_SHARE:
        line = rng.choice(BOILERPLATE).format(
            site=rng.choice(SITES),
            date="%d-%02d-%02d" % (rng.randint(1998, 2026), rng.randint(1, 12), rng.randint(1, 28)))
        out = line.split() + out if rng.random() < 0.5 else out + line.split()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="See the header of bench/corpus.py for how the corpus is made.")
    ap.add_argument("--docs", type=int, default=20000, help="rows to write (default 20000)")
    ap.add_argument("--variants", type=int, default=3,
                    help="edited copies of each base that gets any (default 3)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--base-chars", type=int, default=0,
                    help="short bases of about this many characters (default 0: the usual lengths)")
    ap.add_argument("--out", default="-", help="file to write (default: standard output)")
    ap.add_argument("--key", action="store_true",
                    help="print a digest of the program, the arguments and the sources, and stop")
    a = ap.parse_args()
    if a.docs < 1 or a.variants < 0 or a.base_chars < 0:
        ap.error("--docs must be positive, --variants and --base-chars not negative")

    digest = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        digest.update(f.read())
    digest.update(("docs=%d variants=%d seed=%d\0" % (a.docs, a.variants, a.seed)).encode())
    if a.base_chars:
        digest.update(("base_chars=%d\0" % a.base_chars).encode())
    files, paragraphs = load_sources(digest)
    if a.key:
        print(digest.hexdigest())
        return
    if not files:
        sys.exit("corpus.py: no source text in %s" % " or ".join(SOURCE_GLOBS))

    rng = random.Random(a.seed)
    passages = passages_of(paragraphs, rng)
    sizes = [sum(map(len, p)) + len(p) for p in passages]
    vocab = sorted({w for p in passages for w in p if len(w) > 1 and w.isalpha()})
    mu = math.log(BASE_MEDIAN)

    out = sys.stdout if a.out == "-" else open(a.out, "w", encoding="utf-8", buffering=1 << 20)
    n = bases = families = nbytes = 0
    real = iter(files)
    while n < a.docs:
        words = next(real, None)
        if words is not None and a.base_chars:
            words = cut_to(words, a.base_chars)
        if words is None:
            if a.base_chars:
                length = a.base_chars
            else:
                length = min(BASE_MAX, BASE_MIN + int(rng.lognormvariate(mu, BASE_SIGMA)))
            words, size = [], -1
            while size < length:
                i = rng.randrange(len(passages))
                words.extend(passages[i])
                size += sizes[i]
        n += 1
        bases += 1
        base = n
        text = " ".join(words)
        line = "%d\t%d\t0\t%s\n" % (base, base, text)
        nbytes += len(line)
        out.write(line)
        if rng.random() < 0.5 and a.variants and n < a.docs:
            families += 1
            tokens = len(TOKEN.findall(text))
            for _ in range(a.variants):
                if n >= a.docs:
                    break
                k = edits_for(rng.choice(RESEMBLANCE), words, tokens)
                n += 1
                line = "%d\t%d\t%.4f\t%s\n" % (n, base, k / len(words),
                                                  " ".join(edited(words, k, vocab, rng)))
                nbytes += len(line)
                out.write(line)
    if out is not sys.stdout:
        out.close()
    print("corpus.py: %d rows, %d bases (%d of them whole source files), %d with edited copies; "
          "%d passages, %d vocabulary words; about %d characters a row"
          % (n, bases, min(bases, len(files)), families, len(passages), len(vocab), nbytes // n),
          file=sys.stderr)


if __name__ == "__main__":
    main()
