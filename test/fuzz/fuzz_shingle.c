/*
 * fuzz_shingle.c
 *		The normaliser, tokenizer and HTML stripper (ShingleHashes and
 *		ShingleTexts) on arbitrary bytes.
 *
 * Input: byte 0 chooses the unit (bit 0: char), strip_html (bit 1) and the
 * database encoding (bits 2-3: UTF8, UTF8, LATIN1, SQL_ASCII); byte 1 the
 * shingle size (1 + byte % 32); byte 2 the seed; the rest is the document.
 *
 * Checks: in a UTF8 database nothing is refused; in LATIN1 (a NUL byte) and
 * SQL_ASCII (bytes that are not UTF-8) only with 22021, as the backend's
 * conversion does, and both functions alike.  Both functions count the
 * same shingles, and as many as they hand to their sinks.  When the text
 * they read is valid UTF-8, so is every shingle text (show_shingles returns
 * them as text).  Each hash ShingleHashes gives (from its ASCII fast path or
 * the tokenizer) is the hash of the tokens of the shingle ShingleTexts shows
 * at that place (always from the tokenizer): the tokens are that text split
 * at spaces, or its characters in character mode.
 */
#include "fuzz.h"
#include "mb/pg_wchar.h"
#include "base/hash.h"
#include "base/ndd_limits.h"
#include "text/shingle.h"

typedef struct Run
{
	const char *doc;
	size_t		len;
	ShingleConfig cfg;
	int64		counted;		/* the function's result */
	int64		sunk;			/* shingles its sink saw */
	bool		check_utf8;
	uint64	   *hashes;			/* the shingle hashes, in order */
	int64		nhashes;
	int64		cap;
} Run;

static void
Record(Run *r, uint64 hash)
{
	if (r->nhashes == r->cap)
	{
		r->cap = r->cap ? 2 * r->cap : 256;
		r->hashes = realloc(r->hashes, r->cap * sizeof(uint64));
		if (r->hashes == NULL)
			FUZZ_FAIL("out of memory");
	}
	r->hashes[r->nhashes++] = hash;
}

static void
HashSink(void *arg, const uint64 *hashes, int n)
{
	Run		   *r = (Run *) arg;

	if (n <= 0)
		FUZZ_FAIL("hash batch of %d", n);
	r->sunk += n;
	for (int i = 0; i < n; i++)
		Record(r, hashes[i]);
}

/* The hash ShingleHashes gives the shingle of this text, from its tokens. */
static uint64
ShingleTextHash(const Run *r, const char *text, int len)
{
	uint64		tokens[NDD_SHINGLE_SIZE_MAX];
	int			n = 0;
	int			i = 0;

	while (i < len)
	{
		int			tlen;

		if (r->cfg.unit == SHINGLE_UNIT_WORD)
		{
			tlen = 0;
			while (i + tlen < len && text[i + tlen] != ' ')
				tlen++;
		}
		else
			tlen = Min(pg_utf_mblen((const unsigned char *) text + i), len - i);
		if (tlen == 0 || n == r->cfg.size)
			FUZZ_FAIL("shingle text \"%.*s\" is not %d tokens at most", len, text,
					  r->cfg.size);
		tokens[n++] = NddHashBytes(text + i, tlen, r->cfg.seed);
		i += tlen;
		if (r->cfg.unit == SHINGLE_UNIT_WORD && i < len)
			i++;				/* the space between words */
	}
	return NddHashBytes(tokens, n * sizeof(uint64), r->cfg.seed);
}

static void
TextSink(void *arg, const char *text, int len)
{
	Run		   *r = (Run *) arg;

	if (len <= 0)
		FUZZ_FAIL("empty shingle text");
	if (r->check_utf8 && pg_encoding_verifymbstr(PG_UTF8, text, len) != len)
		FUZZ_FAIL("shingle text is not valid UTF-8");
	r->sunk++;
	Record(r, ShingleTextHash(r, text, len));
}

static void
DoHashes(void *arg)
{
	Run		   *r = (Run *) arg;

	r->counted = ShingleHashes(r->doc, r->len, &r->cfg, HashSink, r);
}

static void
DoTexts(void *arg)
{
	Run		   *r = (Run *) arg;

	r->counted = ShingleTexts(r->doc, r->len, &r->cfg, TextSink, r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int encodings[4] = {PG_UTF8, PG_UTF8, PG_LATIN1, PG_SQL_ASCII};
	Run			h;
	Run			t;
	char	   *doc;
	bool		ok_h;
	bool		ok_t;
	int			code_h;

	if (size < 3)
		return 0;
	fuzz_database_encoding = encodings[(data[0] >> 2) & 3];
	memset(&h, 0, sizeof(h));
	h.cfg.unit = (data[0] & 1) ? SHINGLE_UNIT_CHAR : SHINGLE_UNIT_WORD;
	h.cfg.strip_html = (data[0] & 2) != 0;
	h.cfg.size = 1 + data[1] % NDD_SHINGLE_SIZE_MAX;
	h.cfg.seed = data[2];
	/* exactly the document's bytes, so ASan sees any read past them */
	h.len = size - 3;
	doc = malloc(h.len ? h.len : 1);
	memcpy(doc, data + 3, h.len);
	h.doc = doc;
	t = h;

	/* the text the tokenizer reads is UTF-8 in every encoding but UTF8's own */
	if (fuzz_database_encoding == PG_UTF8)
		t.check_utf8 = pg_encoding_verifymbstr(PG_UTF8, doc, h.len) == (int) h.len;
	else
		t.check_utf8 = true;	/* converted, or checked by the conversion */

	ok_h = FuzzTry(DoHashes, &h);
	code_h = fuzz_sqlerrcode;
	ok_t = FuzzTry(DoTexts, &t);
	if (ok_h != ok_t || (!ok_h && code_h != fuzz_sqlerrcode))
		FUZZ_FAIL("ShingleHashes and ShingleTexts disagree on refusing the text");
	if (!ok_h)
	{
		if (fuzz_database_encoding == PG_UTF8 ||
			fuzz_sqlerrcode != ERRCODE_CHARACTER_NOT_IN_REPERTOIRE)
			FUZZ_FAIL("refused with SQLSTATE %s in encoding %d: %s",
					  unpack_sql_state(fuzz_sqlerrcode), fuzz_database_encoding,
					  fuzz_errmsg);
	}
	else
	{
		if (h.counted != h.sunk || t.counted != t.sunk)
			FUZZ_FAIL("counted %lld and %lld shingles, sank %lld and %lld",
					  (long long) h.counted, (long long) t.counted,
					  (long long) h.sunk, (long long) t.sunk);
		if (h.counted != t.counted)
			FUZZ_FAIL("ShingleHashes counts %lld shingles, ShingleTexts %lld",
					  (long long) h.counted, (long long) t.counted);
		if (h.len == 0 && h.counted != 0)
			FUZZ_FAIL("shingles of an empty document");
		if (h.nhashes != t.nhashes)
			FUZZ_FAIL("%lld shingle hashes, %lld shingle texts",
					  (long long) h.nhashes, (long long) t.nhashes);
		for (int64 i = 0; i < h.nhashes; i++)
			if (h.hashes[i] != t.hashes[i])
				FUZZ_FAIL("shingle %lld: ShingleHashes and the tokens of ShingleTexts disagree",
						  (long long) i);
	}
	FuzzReset();
	free(h.hashes);
	free(t.hashes);
	free(doc);
	return 0;
}
