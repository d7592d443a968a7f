/*
 * shingle.c
 *		Text to shingles, shared by every sketch, and the SQL functions that
 *		expose the shingles themselves: show_shingles(), ndd_fingerprint() and
 *		the sorted shingle sets of discovery (ndd_shingle_set()).  The exact
 *		jaccard() compares hash sets of the same hashes (shingle_set.c).
 *
 * A document goes through three steps.
 *
 * 1. Optional HTML stripping (HtmlStrip): tags, comments, <script> and <style>
 *	  bodies are removed and act as separators; the common character entities
 *	  are decoded.
 *
 * 2. Tokens (TokenizerNext): the text is read as UTF-8.  Letters and digits
 *	  are case-folded (simple case folding, so "Σ", "σ" and "ς" agree) and
 *	  form words; everything else separates words.  Compatibility characters
 *	  (fullwidth Latin, ligatures, circled digits...) are rewritten with
 *	  PostgreSQL's NFKC tables, and words holding combining marks are put in
 *	  NFC, so the usual spellings of a word give one token.  Characters of
 *	  scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar)
 *	  are words of one character each, so Chinese and Japanese text gives
 *	  useful word shingles with the default arguments: a 5-word shingle there
 *	  is a 5-character shingle.  In character mode every character is a
 *	  token, with one space token wherever separators stood.
 *
 *	  The ASCII path is a table lookup per byte; only other characters pay
 *	  for glibc's C.UTF-8 classification.  The shingle loop (ShingleHashes)
 *	  goes faster still through ASCII text: 64 bytes at a time, classified
 *	  and folded with SSE2 and split into words with bit operations on the
 *	  block's masks, leaving every other word to the tokenizer.  Both ways
 *	  give the same tokens (shingle.sql compares them).
 *
 * 3. Shingles: each token is hashed with seeded XXH3, and each window of
 *	  `size` consecutive token hashes is hashed again into the shingle hash
 *	  (both inlined: NddHashShort).
 *	  A document with fewer tokens than `size` (but at least one) gives one
 *	  shingle made of all its tokens; a document without tokens gives none.
 */
#include "postgres.h"

#include <locale.h>
#include <wctype.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "catalog/pg_type.h"
#include "common/unicode_norm.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "base/sort_uint64.h"
#include "text/shingle.h"

/* Shingle hashes handed to a sink at a time. */
#define SHINGLE_BATCH				256

/* Look at pending interrupts after this many input bytes. */
#define SHINGLE_INTERRUPT_BYTES		(64 * 1024)

/* Longest token kept whole; longer runs are cut into pieces this long. */
#define SHINGLE_MAX_TOKEN_BYTES		(16 * 1024)

/*
 * Every byte: ASCII letters and digits folded to lower case, BYTE_SEPARATOR
 * for other ASCII, BYTE_NOT_ASCII for the bytes of longer characters.
 */
#define BYTE_SEPARATOR	0
#define BYTE_NOT_ASCII	1
static char byte_fold[256];
static bool byte_fold_ready = false;

static locale_t utf8_locale = (locale_t) 0;

/* The tokenizer's state over one document. */
typedef struct Tokenizer
{
	const unsigned char *p;
	const unsigned char *end;
	const unsigned char *next_check;
	ShingleUnit unit;

	/* the current word, folded, UTF-8 */
	char	   *word;
	int			word_len;
	int			word_cap;
	bool		word_needs_nfc;

	/* code points of an NFKC expansion, handed out one at a time */
	pg_wchar	queue[32];
	int			queue_pos;
	int			queue_len;

	/* a separator was seen since the last word */
	bool		gap;
	bool		any_word;

	/* character mode: the word being handed out one character at a time */
	int			char_pos;
	bool		char_space_pending;

	/* the token handed to the caller */
	const char *token;
	int			token_len;
} Tokenizer;

typedef enum CodePointClass
{
	CP_SEPARATOR,
	CP_LETTER,					/* part of a word */
	CP_MARK,					/* combining mark: continues a word */
	CP_STANDALONE				/* a word by itself (scripts without spaces) */
} CodePointClass;

/* Fill the ASCII folding table and load the C.UTF-8 locale, once. */
static void
InitTables(void)
{
	if (!byte_fold_ready)
	{
		for (int c = 0; c < 256; c++)
		{
			if (c >= 'A' && c <= 'Z')
				byte_fold[c] = (char) (c - 'A' + 'a');
			else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
				byte_fold[c] = (char) c;
			else if (c >= 0x80)
				byte_fold[c] = BYTE_NOT_ASCII;
			else
				byte_fold[c] = BYTE_SEPARATOR;
		}
		byte_fold_ready = true;
	}
	if (utf8_locale == (locale_t) 0)
	{
		utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t) 0);
		if (utf8_locale == (locale_t) 0)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("could not load locale \"C.UTF-8\" for Unicode character classes"),
					 errhint("Install the C.UTF-8 locale of the C library.")));
	}
}

/* Is this a character of a script that does not separate words by spaces? */
static inline bool
IsStandaloneScript(pg_wchar c)
{
	return (c >= 0x0E00 && c <= 0x0EFF) ||	/* Thai, Lao */
		(c >= 0x1000 && c <= 0x109F) || /* Myanmar */
		(c >= 0x1780 && c <= 0x17FF) || /* Khmer */
		(c >= 0x2E80 && c <= 0x2FDF) || /* CJK radicals */
		(c >= 0x3005 && c <= 0x3007) || /* 々 〆 〇 */
		(c >= 0x3021 && c <= 0x3029) ||
		(c >= 0x3031 && c <= 0x3035) ||
		(c >= 0x3040 && c <= 0x30FF) || /* Hiragana, Katakana */
		(c >= 0x31F0 && c <= 0x31FF) ||
		(c >= 0x3400 && c <= 0x4DBF) || /* CJK extension A */
		(c >= 0x4E00 && c <= 0x9FFF) || /* CJK unified ideographs */
		(c >= 0xF900 && c <= 0xFAFF) || /* CJK compatibility ideographs */
		(c >= 0x20000 && c <= 0x3FFFF); /* CJK extensions B and later */
}

/* Characters whose NFKC form differs often enough to be worth a lookup. */
static inline bool
IsCompatibilityCandidate(pg_wchar c)
{
	return (c >= 0x00A0 && c <= 0x00BF) ||
		(c >= 0x0132 && c <= 0x0149) ||
		c == 0x017F ||
		(c >= 0x01C4 && c <= 0x01CC) ||
		(c >= 0x1D2C && c <= 0x1DBF) ||
		(c >= 0x2070 && c <= 0x24FF) ||	/* not General Punctuation: its
										 * NFKC forms only separate words */
		(c >= 0x2F00 && c <= 0x2FDF) ||
		(c >= 0x3131 && c <= 0x318E) ||
		(c >= 0x3200 && c <= 0x33FF) ||
		(c >= 0xFB00 && c <= 0xFB4F) ||
		(c >= 0xFE30 && c <= 0xFE6F) ||
		(c >= 0xFF00 && c <= 0xFFEF) ||
		(c >= 0x1D400 && c <= 0x1D7FF) ||
		(c >= 0x1F100 && c <= 0x1F1FF);
}

/* Classify a code point; *folded gets its case-folded form. */
static CodePointClass
ClassifyCodePoint(pg_wchar c, pg_wchar *folded)
{
	unsigned char utf8[8];

	*folded = c;
	if (c < 0x80)
	{
		*folded = (pg_wchar) (unsigned char) byte_fold[c];
		return *folded != BYTE_SEPARATOR ? CP_LETTER : CP_SEPARATOR;
	}
	if (c >= 0xDC80 && c <= 0xDCFF)
		return CP_LETTER;		/* a byte that was not UTF-8, kept as is */
	if (IsStandaloneScript(c))
	{
		if (iswpunct_l((wint_t) c, utf8_locale) || iswspace_l((wint_t) c, utf8_locale))
			return CP_SEPARATOR;
		return CP_STANDALONE;
	}
	if (iswalnum_l((wint_t) c, utf8_locale))
	{
		/* lower(upper(c)) is simple case folding: it also unifies final sigma */
		*folded = (pg_wchar) towlower_l(towupper_l((wint_t) c, utf8_locale),
										utf8_locale);
		return CP_LETTER;
	}
	/* zero-width characters (combining marks, viramas, joiners) */
	unicode_to_utf8(c, utf8);
	if (pg_encoding_dsplen(PG_UTF8, (const char *) utf8) == 0)
		return CP_MARK;
	return CP_SEPARATOR;
}

/* Append n bytes to the current word, growing it as needed. */
static inline void
WordAppend(Tokenizer *tz, const char *bytes, int n)
{
	if (tz->word_len + n > tz->word_cap)
	{
		tz->word_cap = Max(tz->word_cap * 2, tz->word_len + n);
		tz->word = repalloc(tz->word, tz->word_cap);
	}
	memcpy(tz->word + tz->word_len, bytes, n);
	tz->word_len += n;
}

/* Append a code point to the current word, as UTF-8. */
static inline void
WordAppendCodePoint(Tokenizer *tz, pg_wchar c)
{
	unsigned char buf[8];

	unicode_to_utf8(c, buf);
	WordAppend(tz, (const char *) buf, pg_utf_mblen(buf));
}

/* Put the current word in NFC (it holds combining marks). */
static void
WordComposeNFC(Tokenizer *tz)
{
	pg_wchar   *wide = palloc((tz->word_len + 1) * sizeof(pg_wchar));
	pg_wchar   *composed;
	const unsigned char *s = (const unsigned char *) tz->word;
	const unsigned char *e = s + tz->word_len;
	int			n = 0;

	while (s < e)
	{
		wide[n++] = utf8_to_unicode(s);
		s += pg_utf_mblen(s);
	}
	wide[n] = 0;
	composed = unicode_normalize(UNICODE_NFC, wide);
	tz->word_len = 0;
	for (pg_wchar *c = composed; *c; c++)
		WordAppendCodePoint(tz, *c);
	pfree(wide);
	pfree(composed);
	tz->word_needs_nfc = false;
}

/*
 * Look at the next non-ASCII-fast-path code point without consuming it
 * (TokenizerTake does).  Compatibility characters are replaced by their NFKC
 * expansion here, and bytes that are not UTF-8 become U+DC80..U+DCFF (as
 * Python's surrogateescape does), so they stay in their word unchanged.
 */
static bool
TokenizerPeek(Tokenizer *tz, pg_wchar *c)
{
	if (tz->queue_pos < tz->queue_len)
	{
		*c = tz->queue[tz->queue_pos];
		return true;
	}
	if (tz->p >= tz->end)
		return false;

	tz->queue_pos = 0;
	tz->queue_len = 1;
	if (*tz->p < 0x80)
		tz->queue[0] = *tz->p++;
	else
	{
		int			n = pg_utf_mblen(tz->p);
		pg_wchar	u;

		if (tz->p + n > tz->end || !pg_utf8_islegal(tz->p, n))
		{
			tz->queue[0] = 0xDC00 + *tz->p++;
			*c = tz->queue[0];
			return true;
		}
		u = utf8_to_unicode(tz->p);
		tz->p += n;
		if (u >= 0xFF01 && u <= 0xFF5E)
			tz->queue[0] = u - 0xFEE0;	/* fullwidth ASCII */
		else if (IsCompatibilityCandidate(u))
		{
			pg_wchar	one[2] = {u, 0};
			pg_wchar   *norm = unicode_normalize(UNICODE_NFKC, one);

			tz->queue_len = 0;
			for (pg_wchar *x = norm; *x && tz->queue_len < lengthof(tz->queue); x++)
				tz->queue[tz->queue_len++] = *x;
			pfree(norm);
			if (tz->queue_len == 0)
				tz->queue[tz->queue_len++] = ' ';
		}
		else
			tz->queue[0] = u;
	}
	*c = tz->queue[0];
	return true;
}

/* Consume the code point TokenizerPeek returned. */
static inline void
TokenizerTake(Tokenizer *tz)
{
	tz->queue_pos++;
}

/* Look at pending interrupts once every SHINGLE_INTERRUPT_BYTES of input. */
static inline void
TokenizerCheckInterrupts(Tokenizer *tz, const unsigned char *p)
{
	if (unlikely(p >= tz->next_check))
	{
		CHECK_FOR_INTERRUPTS();
		tz->next_check = p + SHINGLE_INTERRUPT_BYTES;
	}
}

/*
 * TokenizerNextWord's fast path: a run of ASCII, read with the state kept in
 * locals.  The word buffer always has room for SHINGLE_MAX_TOKEN_BYTES more
 * bytes.  *gap is set when separators come before the word.  Returns true
 * when the word is complete or the text has ended, false when the next byte
 * needs another look (not ASCII, or a pause to look at interrupts).
 */
static pg_attribute_always_inline bool
TokenizerReadAscii(Tokenizer *tz, bool *gap)
{
	const unsigned char *p = tz->p;
	const unsigned char *end = tz->end;
	char	   *word = tz->word;
	int			len = tz->word_len;
	bool		ended = false;

	if (unlikely(len >= SHINGLE_MAX_TOKEN_BYTES))
		return true;
	while (p < end)
	{
		char		f = byte_fold[*p];

		if (likely(f > BYTE_NOT_ASCII))
		{
			word[len++] = f;
			p++;
			if (unlikely(len >= SHINGLE_MAX_TOKEN_BYTES))
			{
				ended = true;
				break;
			}
		}
		else if (f == BYTE_SEPARATOR)
		{
			p++;
			if (len > 0)
			{
				tz->gap = ended = true;
				break;
			}
			*gap = true;
			if (unlikely(p >= tz->next_check))
				break;			/* a long run of separators */
		}
		else
			break;				/* not ASCII: the general path */
	}
	tz->p = p;
	tz->word_len = len;
	if (ended)
		return true;
	TokenizerCheckInterrupts(tz, p);
	return p >= end;
}

/*
 * TokenizerNextWord's general path: c, the code point TokenizerPeek returned,
 * joins the word, or ends it (before c when c is a word by itself and the
 * word is not empty).  *gap is set when c is a separator before the word.
 * Returns true when the word is complete.
 */
static inline bool
TokenizerReadCodePoint(Tokenizer *tz, pg_wchar c, bool *gap)
{
	pg_wchar	folded;

	switch (ClassifyCodePoint(c, &folded))
	{
		case CP_LETTER:
			TokenizerTake(tz);
			WordAppendCodePoint(tz, folded);
			return unlikely(tz->word_len >= SHINGLE_MAX_TOKEN_BYTES);
		case CP_MARK:
			TokenizerTake(tz);
			if (tz->word_len > 0)
			{
				WordAppendCodePoint(tz, c);
				tz->word_needs_nfc = true;
			}
			return false;
		case CP_SEPARATOR:
			TokenizerTake(tz);
			if (tz->word_len > 0)
			{
				tz->gap = true;
				return true;
			}
			*gap = true;
			return false;
		case CP_STANDALONE:
			if (tz->word_len == 0)
			{
				TokenizerTake(tz);
				WordAppendCodePoint(tz, c);
			}
			return true;
	}
	return false;
}

/*
 * Read the next word into tz->word.  *gap_before tells whether separators
 * stood between it and the previous word.  Returns false at the end.
 */
static bool
TokenizerNextWord(Tokenizer *tz, bool *gap_before)
{
	bool		gap = tz->gap;	/* separators before this word */
	pg_wchar	c;

	/* 1. Start an empty word. */
	tz->word_len = 0;
	tz->word_needs_nfc = false;
	tz->gap = false;
	TokenizerCheckInterrupts(tz, tz->p);

	/* 2. Read characters until the word or the text ends. */
	for (;;)
	{
		/* ASCII the fast way, unless an NFKC expansion is being handed out */
		if (tz->queue_pos >= tz->queue_len)
		{
			if (TokenizerReadAscii(tz, &gap))
				break;
			if (byte_fold[*tz->p] != BYTE_NOT_ASCII)
				continue;		/* it only paused to look at interrupts */
		}
		if (!TokenizerPeek(tz, &c) || TokenizerReadCodePoint(tz, c, &gap))
			break;
	}

	/* 3. No word means the end; a word holding marks goes into NFC. */
	if (tz->word_len == 0)
		return false;
	if (tz->word_needs_nfc)
		WordComposeNFC(tz);
	*gap_before = gap && tz->any_word;
	tz->any_word = true;
	return true;
}

/* Hand the next token to tz->token / tz->token_len; false at the end. */
static bool
TokenizerNext(Tokenizer *tz)
{
	if (tz->unit == SHINGLE_UNIT_WORD)
	{
		bool		gap;

		if (!TokenizerNextWord(tz, &gap))
			return false;
		tz->token = tz->word;
		tz->token_len = tz->word_len;
		return true;
	}

	/* character mode */
	if (tz->char_space_pending)
	{
		tz->char_space_pending = false;
		tz->token = " ";
		tz->token_len = 1;
		return true;
	}
	if (tz->char_pos >= tz->word_len)
	{
		bool		gap = false;

		if (!TokenizerNextWord(tz, &gap))
			return false;
		tz->char_pos = 0;
		if (gap)
		{
			tz->token = " ";
			tz->token_len = 1;
			return true;
		}
	}
	tz->token = tz->word + tz->char_pos;
	tz->token_len = pg_utf_mblen((const unsigned char *) tz->token);
	if (tz->char_pos + tz->token_len > tz->word_len)
		tz->token_len = tz->word_len - tz->char_pos;	/* a stray non-UTF-8 byte */
	tz->char_pos += tz->token_len;
	return true;
}

/* Length of a named HTML entity's decoded text, or 0 if we do not know it. */
static int
HtmlEntity(const char *name, int len, char *out)
{
	static const struct
	{
		const char *name;
		const char *text;
	}			entities[] =
	{
		{"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"},
		{"nbsp", " "}, {"copy", "\xC2\xA9"}, {"reg", "\xC2\xAE"},
		{"mdash", "\xE2\x80\x94"}, {"ndash", "\xE2\x80\x93"},
		{"hellip", "\xE2\x80\xA6"}, {"laquo", "\xC2\xAB"}, {"raquo", "\xC2\xBB"},
	};

	for (int i = 0; i < lengthof(entities); i++)
	{
		if ((int) strlen(entities[i].name) == len &&
			memcmp(entities[i].name, name, len) == 0)
		{
			strcpy(out, entities[i].text);
			return strlen(out);
		}
	}
	if (len >= 2 && name[0] == '#')
	{
		bool		hex = (name[1] == 'x' || name[1] == 'X');
		int			i = hex ? 2 : 1;
		long		code = 0;

		/* digits only, and only the len bytes we were given */
		if (i == len)
			return 0;
		for (; i < len; i++)
		{
			int			d;

			if (name[i] >= '0' && name[i] <= '9')
				d = name[i] - '0';
			else if (hex && name[i] >= 'a' && name[i] <= 'f')
				d = name[i] - 'a' + 10;
			else if (hex && name[i] >= 'A' && name[i] <= 'F')
				d = name[i] - 'A' + 10;
			else
				return 0;
			code = code * (hex ? 16 : 10) + d;
			if (code > 0x10FFFF)
				return 0;
		}
		if (code > 0 && !(code >= 0xD800 && code <= 0xDFFF))
		{
			unicode_to_utf8((pg_wchar) code, (unsigned char *) out);
			return pg_utf_mblen((unsigned char *) out);
		}
	}
	return 0;
}

/* Case-insensitive "does s (of n bytes) start with the ASCII word w?" */
static bool
StartsWithWord(const char *s, size_t n, const char *w)
{
	size_t		wl = strlen(w);

	return n >= wl && pg_strncasecmp(s, w, wl) == 0 &&
		(n == wl || !isalnum((unsigned char) s[wl]));
}

/* Find needle (ASCII, lower case) in s case-insensitively; NULL if absent. */
static const char *
FindNoCase(const char *s, const char *end, const char *needle)
{
	size_t		nl = strlen(needle);

	for (; s + nl <= end; s++)
		if (pg_strncasecmp(s, needle, nl) == 0)
			return s;
	return NULL;
}

/* Does the '<' at p open a tag, a comment or a declaration? */
static inline bool
HtmlOpensMarkup(const char *p, const char *end)
{
	return *p == '<' && p + 1 < end &&
		(isalpha((unsigned char) p[1]) || p[1] == '/' || p[1] == '!' || p[1] == '?');
}

/*
 * Just past the end of the closing tag that starts with closing ("</script"
 * or "</style") at or after p; end if there is none.
 */
static inline const char *
HtmlSkipPastClosingTag(const char *p, const char *end, const char *closing)
{
	const char *close = FindNoCase(p, end, closing);

	if (close == NULL)
		return end;
	close = memchr(close, '>', end - close);
	return close ? close + 1 : end;
}

/*
 * Just past the markup that the '<' at p opens: a comment, or a tag, with the
 * body of a <script> or <style> and its closing tag.
 */
static inline const char *
HtmlSkipMarkup(const char *p, const char *end)
{
	const char *close;
	bool		is_script;
	bool		is_style;

	if (end - p >= 4 && memcmp(p, "<!--", 4) == 0)
	{
		close = FindNoCase(p + 4, end, "-->");
		return close ? close + 3 : end;
	}
	is_script = StartsWithWord(p + 1, end - p - 1, "script");
	is_style = StartsWithWord(p + 1, end - p - 1, "style");
	close = memchr(p, '>', end - p);
	p = close ? close + 1 : end;
	if (is_script || is_style)
		p = HtmlSkipPastClosingTag(p, end, is_script ? "</script" : "</style");
	return p;
}

/*
 * Decode the entity that the '&' at p may start, writing its text at *o and
 * moving *o past it.  Returns where the entity ends, or NULL (and writes
 * nothing) if p starts no entity we know.
 */
static inline const char *
HtmlDecodeEntity(const char *p, const char *end, char **o)
{
	const char *semi = memchr(p + 1, ';', Min(end - p - 1, 12));
	char		buf[8];
	int			n;

	if (semi == NULL)
		return NULL;
	n = HtmlEntity(p + 1, semi - p - 1, buf);
	if (n == 0)
		return NULL;
	/* a decoded entity is never longer than its source */
	memcpy(*o, buf, n);
	*o += n;
	return semi + 1;
}

/*
 * Remove HTML markup.  Tags and comments become a space; the bodies of
 * <script> and <style> are dropped; entities are decoded.  A '<' that does
 * not open a tag is kept as text.
 */
static char *
HtmlStrip(const char *in, size_t len, size_t *out_len)
{
	const char *p = in;
	const char *end = in + len;
	char	   *out = palloc(len + 1);
	char	   *o = out;
	const char *next_check = p + SHINGLE_INTERRUPT_BYTES;

	while (p < end)
	{
		const char *entity_end;

		if (p >= next_check)
		{
			CHECK_FOR_INTERRUPTS();
			next_check = p + SHINGLE_INTERRUPT_BYTES;
		}
		if (HtmlOpensMarkup(p, end))
		{
			/* markup separates words */
			p = HtmlSkipMarkup(p, end);
			*o++ = ' ';
		}
		else if (*p == '&' && (entity_end = HtmlDecodeEntity(p, end, &o)) != NULL)
			p = entity_end;
		else
			*o++ = *p++;
	}
	*o = '\0';
	*out_len = o - out;
	return out;
}

/*
 * Set up a tokenizer over the len bytes at text, which need not be
 * NUL-terminated (a text datum's are not).  The text is converted to UTF-8 if
 * the database uses another encoding, and stripped of HTML if asked.
 */
static void
TokenizerInit(Tokenizer *tz, const char *text, size_t len, const ShingleConfig *cfg)
{
	InitTables();
	if (GetDatabaseEncoding() != PG_UTF8)
	{
		const char *utf8 = pg_server_to_any(text, (int) len, PG_UTF8);

		/*
		 * Without a conversion (SQL_ASCII, which is only checked, or an empty
		 * string) we get our own bytes back, and only len of them are ours.
		 * A converted copy is NUL-terminated and holds no NUL before its end.
		 */
		if (utf8 != text)
		{
			text = utf8;
			len = strlen(utf8);
		}
	}
	if (cfg->strip_html)
		text = HtmlStrip(text, len, &len);

	memset(tz, 0, sizeof(*tz));
	tz->p = (const unsigned char *) text;
	tz->end = tz->p + len;
	tz->next_check = tz->p;
	tz->unit = cfg->unit;
	tz->word_cap = SHINGLE_MAX_TOKEN_BYTES + 64;
	tz->word = palloc(tz->word_cap);
}

/* The unit named word or char (any case); an error otherwise. */
ShingleUnit
ShingleUnitFromName(const char *name)
{
	if (pg_strcasecmp(name, "word") == 0)
		return SHINGLE_UNIT_WORD;
	if (pg_strcasecmp(name, "char") == 0)
		return SHINGLE_UNIT_CHAR;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid shingle unit \"%s\"", name),
			 errhint("Valid units are \"word\" and \"char\".")));
	return SHINGLE_UNIT_WORD;	/* keep compiler quiet */
}

/* The name of a unit, as the SQL functions take it. */
const char *
ShingleUnitName(ShingleUnit unit)
{
	return unit == SHINGLE_UNIT_CHAR ? "char" : "word";
}

/* Fill a config from SQL arguments, checking every one. */
void
ShingleConfigInit(ShingleConfig *cfg, const char *unit_name, int size,
				  bool strip_html, uint64 seed)
{
	cfg->unit = ShingleUnitFromName(unit_name);
	if (size < NDD_SHINGLE_SIZE_MIN || size > NDD_SHINGLE_SIZE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle_size %d is out of range", size),
				 errdetail("shingle_size must be between %d and %d.",
						   NDD_SHINGLE_SIZE_MIN, NDD_SHINGLE_SIZE_MAX)));
	cfg->size = size;
	cfg->strip_html = strip_html;
	cfg->seed = seed;
}

/*
 * The shingle loop's fast path reads ASCII text 64 bytes at a time: one pass
 * of SSE2 (part of every x86-64) classifies and folds the block, and the
 * words are then found with bit operations on its masks, with no branch per
 * byte and none on the previous word's end.
 */
#define ASCII_BLOCK		64

/*
 * Classify the 64 bytes at p: bit i of *alnum says p[i] is an ASCII letter or
 * digit, bit i of *nonascii that it is not ASCII.  folded[i] gets p[i] folded
 * as byte_fold folds it, where p[i] is an ASCII letter or digit.
 */
static pg_attribute_always_inline void
AsciiBlock(const unsigned char *p, unsigned char *folded,
		   uint64 *alnum, uint64 *nonascii)
{
	uint64		a = 0,
				n = 0;

#ifdef __SSE2__
	for (int i = 0; i < ASCII_BLOCK / 16; i++)
	{
		__m128i		x = _mm_loadu_si128((const __m128i *) (p + 16 * i));
		/* x | 0x20 is a..z exactly for ASCII letters, folded */
		__m128i		lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
		__m128i		l = _mm_sub_epi8(lower, _mm_set1_epi8('a'));
		__m128i		d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
		/* unsigned v <= max, as min(v, max) == v */
		__m128i		letter = _mm_cmpeq_epi8(_mm_min_epu8(l, _mm_set1_epi8(25)), l);
		__m128i		digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);

		_mm_storeu_si128((__m128i *) (folded + 16 * i),
						 _mm_or_si128(x, _mm_and_si128(letter, _mm_set1_epi8(0x20))));
		a |= (uint64) (uint16) _mm_movemask_epi8(_mm_or_si128(letter, digit)) << (16 * i);
		n |= (uint64) (uint16) _mm_movemask_epi8(x) << (16 * i);
	}
#else
	for (int i = 0; i < ASCII_BLOCK; i++)
	{
		char		f = byte_fold[p[i]];

		folded[i] = (unsigned char) f;
		a |= (uint64) (f > BYTE_NOT_ASCII) << i;
		n |= (uint64) (f == BYTE_NOT_ASCII) << i;
	}
#endif
	*alnum = a;
	*nonascii = n;
}

/*
 * Token hashes waiting to be hashed into shingles, a few hundred at a time,
 * in a loop of their own: tokens[] starts with the last k - 1 token hashes of
 * the previous round, so that every window of k is contiguous.
 */
typedef struct ShingleWindow
{
	uint64		tokens[NDD_SHINGLE_SIZE_MAX - 1 + SHINGLE_BATCH];
	int			ntok;			/* in tokens[] */
	int64		done;			/* tokens before tokens[]; with ntok, all */
	uint64		seed;
	uint64		batch[SHINGLE_BATCH];
	ShingleHashSink sink;
	void	   *arg;
} ShingleWindow;

/*
 * Hash each window of k tokens that ends past tokens[k - 2] into a shingle
 * hash, hand them to the sink, and keep the last k - 1 tokens.
 */
static pg_attribute_always_inline void
ShingleWindowFlushK(ShingleWindow *win, int k)
{
	int			n = win->ntok - (k - 1);

	if (n <= 0)
		return;
	for (int i = 0; i < n; i++)
		win->batch[i] = NddHashShort(win->tokens + i, k * sizeof(uint64), win->seed);
	win->sink(win->arg, win->batch, n);
	memmove(win->tokens, win->tokens + n, (k - 1) * sizeof(uint64));
	win->ntok = k - 1;
	win->done += n;
}

/* ShingleWindowFlushK for the default size, a constant. */
static pg_noinline void
ShingleWindowFlushDefault(ShingleWindow *win)
{
	ShingleWindowFlushK(win, NDD_SHINGLE_SIZE_DEFAULT);
}

/* ShingleWindowFlushK for any size. */
static pg_noinline void
ShingleWindowFlushAny(ShingleWindow *win, int k)
{
	ShingleWindowFlushK(win, k);
}

/* Flush the window: k is a constant where it is the default. */
static pg_attribute_always_inline void
ShingleWindowFlush(ShingleWindow *win, int k)
{
	if (k == NDD_SHINGLE_SIZE_DEFAULT)
		ShingleWindowFlushDefault(win);
	else
		ShingleWindowFlushAny(win, k);
}

/* Add the next token's hash. */
static pg_attribute_always_inline void
ShingleWindowPush(ShingleWindow *win, uint64 h, int k)
{
	win->tokens[win->ntok++] = h;
	if (unlikely(win->ntok == k - 1 + SHINGLE_BATCH))
		ShingleWindowFlush(win, k);
}

/*
 * The hashes of the one-byte tokens of character shingles, for one seed: the
 * ASCII characters of a word, and the space between words.
 */
static uint64 char_hashes[128];
static uint64 char_hashes_seed;
static bool char_hashes_ready = false;

/* Fill char_hashes for a seed, unless it holds that seed's already. */
static void
CharHashesInit(uint64 seed)
{
	if (char_hashes_ready && char_hashes_seed == seed)
		return;
	for (int c = 0; c < 128; c++)
	{
		char		byte = (char) c;

		char_hashes[c] = NddHashBytes(&byte, 1, seed);
	}
	char_hashes_seed = seed;
	char_hashes_ready = true;
}

/*
 * Push the tokens of the words of a block that end before its first byte
 * that is not ASCII: bit i of starts marks a word's first byte, bit i of ends
 * the separator after it (ends is not 0).  Returns the offset past the last
 * word's separator.
 */
static pg_attribute_always_inline int
ShinglePushBlockWords(Tokenizer *tz, ShingleWindow *win,
					  const unsigned char *block, uint64 starts, uint64 ends,
					  ShingleUnit unit, int k)
{
	int			e = 0;

	do
	{
		int			s = pg_rightmost_one_pos64(starts);

		e = pg_rightmost_one_pos64(ends);
		if (unit == SHINGLE_UNIT_WORD)
			ShingleWindowPush(win, NddHashShort(block + s, e - s, win->seed), k);
		else
		{
			/* separators before the word make a space, after the first */
			if ((tz->gap || s > 0) && tz->any_word)
				ShingleWindowPush(win, char_hashes[' '], k);
			for (int i = s; i < e; i++)
				ShingleWindowPush(win, char_hashes[block[i]], k);
			tz->any_word = true;
			tz->gap = true;
		}
		starts &= starts - 1;
		ends &= ends - 1;
	} while (ends != 0);
	tz->any_word = true;
	tz->gap = true;
	return e + 1;
}

/*
 * ShingleTokens' fast path: whole words of ASCII letters and digits, ended by
 * an ASCII separator within a block of ASCII_BLOCK bytes, before the block's
 * first byte that is not ASCII.  tz->p is always where a word may start
 * (TokenizerNextWord leaves it so too), and the tokens, gaps and state left
 * behind are those of TokenizerNextWord.  Stops where a word needs it.
 */
static pg_attribute_always_inline void
ShingleAsciiBlocks(Tokenizer *tz, ShingleWindow *win, ShingleUnit unit, int k)
{
	const unsigned char *p = tz->p;
	unsigned char block[ASCII_BLOCK];

	while (tz->queue_pos >= tz->queue_len && tz->end - p >= ASCII_BLOCK)
	{
		uint64		alnum,
					nonascii,
					starts,
					ends;

		TokenizerCheckInterrupts(tz, p);
		AsciiBlock(p, block, &alnum, &nonascii);
		starts = alnum & ~(alnum << 1);
		/* the separator after each word, before the first non-ASCII */
		ends = ~alnum & (alnum << 1) & (nonascii ? (nonascii & -nonascii) - 1 : ~UINT64CONST(0));
		if (ends == 0)
		{
			if (nonascii != 0)
				break;			/* TokenizerNextWord reads on from p */
			if (alnum == 0)
			{
				p += ASCII_BLOCK;	/* only separators */
				tz->gap = true;
				continue;
			}
			if (starts & 1)
				break;			/* a word of ASCII_BLOCK bytes or more */
			/* a word that goes on past the block: start a block there */
			p += pg_rightmost_one_pos64(starts);
			tz->gap = true;
			continue;
		}
		p += ShinglePushBlockWords(tz, win, block, starts, ends, unit, k);
		if (nonascii != 0)
			break;
	}
	tz->p = p;
}

/*
 * Push the character tokens of the word TokenizerNextWord read, after a space
 * token if separators stood before it (gap).
 */
static pg_attribute_always_inline void
ShinglePushWordChars(Tokenizer *tz, ShingleWindow *win, bool gap, int k)
{
	const unsigned char *w = (const unsigned char *) tz->word;
	int			i = 0;

	if (gap)
		ShingleWindowPush(win, char_hashes[' '], k);
	while (i < tz->word_len)
	{
		int			n;

		if (w[i] < 0x80)
		{
			ShingleWindowPush(win, char_hashes[w[i]], k);
			i++;
			continue;
		}
		n = pg_utf_mblen(w + i);
		if (i + n > tz->word_len)
			n = tz->word_len - i;	/* a stray non-UTF-8 byte */
		ShingleWindowPush(win, NddHashShort(w + i, n, win->seed), k);
		i += n;
	}
}

/*
 * Feed every token of the document to the window: ShingleHashes' loop, for
 * one unit (a constant, so that each unit gets a loop of its own).
 */
static pg_attribute_always_inline void
ShingleTokens(Tokenizer *tz, ShingleWindow *win, ShingleUnit unit, int k)
{
	bool		gap;

	for (;;)
	{
		/* 1. As many whole ASCII words as the fast path takes. */
		ShingleAsciiBlocks(tz, win, unit, k);

		/* 2. One word the general way. */
		if (!TokenizerNextWord(tz, &gap))
			break;
		if (unit == SHINGLE_UNIT_WORD)
			ShingleWindowPush(win, NddHashShort(tz->word, tz->word_len, win->seed), k);
		else
			ShinglePushWordChars(tz, win, gap, k);
	}
	ShingleWindowFlush(win, k);
}

/*
 * Call sink with the hash of every shingle of the text.  Returns the number
 * of shingles.
 *
 * The tokens are those TokenizerNext hands out, taken a word at a time: a
 * word is one token, or in character mode its characters are, after a space
 * token when separators stood before it.  Each token's hash is the seeded
 * hash of its bytes (from a table for ASCII characters), and each window of
 * k of them is hashed again into a shingle hash.
 */
int64
ShingleHashes(const char *text, size_t len, const ShingleConfig *cfg,
			  ShingleHashSink sink, void *arg)
{
	Tokenizer	tz;
	ShingleWindow win;
	int			k = cfg->size;
	uint64		seed = cfg->seed;
	int64		ntokens;

	win.ntok = 0;
	win.done = 0;
	win.seed = seed;
	win.sink = sink;
	win.arg = arg;

	TokenizerInit(&tz, text, len, cfg);
	/* the default size as a constant: the window hash is then straight code */
	if (cfg->unit == SHINGLE_UNIT_WORD && k == NDD_SHINGLE_SIZE_DEFAULT)
		ShingleTokens(&tz, &win, SHINGLE_UNIT_WORD, NDD_SHINGLE_SIZE_DEFAULT);
	else if (cfg->unit == SHINGLE_UNIT_WORD)
		ShingleTokens(&tz, &win, SHINGLE_UNIT_WORD, k);
	else
	{
		CharHashesInit(seed);
		if (k == NDD_SHINGLE_SIZE_DEFAULT)
			ShingleTokens(&tz, &win, SHINGLE_UNIT_CHAR, NDD_SHINGLE_SIZE_DEFAULT);
		else
			ShingleTokens(&tz, &win, SHINGLE_UNIT_CHAR, k);
	}
	pfree(tz.word);

	ntokens = win.done + win.ntok;
	if (ntokens > 0 && ntokens < k)
	{
		/* a short document is one shingle of all its tokens */
		win.batch[0] = NddHashBytes(win.tokens, ntokens * sizeof(uint64), seed);
		sink(arg, win.batch, 1);
	}
	return ntokens >= k ? ntokens - k + 1 : Min(ntokens, 1);
}

/*
 * Call sink with the hash of every element of a text[] or bigint[] (the
 * argument argname): a set given as it is, without tokenization.  NULL
 * elements are an error.
 */
void
ElementHashes(ArrayType *arr, const char *argname, uint64 seed,
			  ShingleHashSink sink, void *arg)
{
	Oid			elemtype = ARR_ELEMTYPE(arr);
	Datum	   *elems;
	int			n;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	uint64		batch[SHINGLE_BATCH];
	int			nbatch = 0;

	NddCheckNoNulls(arr, argname);
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &elems, NULL, &n);
	for (int i = 0; i < n; i++)
	{
		if (elemtype == INT8OID)
		{
			int64		v = DatumGetInt64(elems[i]);

			batch[nbatch++] = NddHashBytes(&v, sizeof(v), seed);
		}
		else
		{
			text	   *t = DatumGetTextPP(elems[i]);

			batch[nbatch++] = NddHashBytes(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), seed);
		}
		if (nbatch == SHINGLE_BATCH)
		{
			CHECK_FOR_INTERRUPTS();
			sink(arg, batch, nbatch);
			nbatch = 0;
		}
	}
	if (nbatch > 0)
		sink(arg, batch, nbatch);
}

/*
 * Call sink with the text of every shingle: the tokens of word shingles
 * joined by single spaces, the characters of character shingles as they are.
 */
int64
ShingleTexts(const char *text, size_t len, const ShingleConfig *cfg,
			 ShingleTextSink sink, void *arg)
{
	Tokenizer	tz;
	char	   *tokens[NDD_SHINGLE_SIZE_MAX];
	int			k = cfg->size;
	int64		ntokens = 0;
	int64		nshingles = 0;
	StringInfoData buf;

	initStringInfo(&buf);
	TokenizerInit(&tz, text, len, cfg);
	for (;;)
	{
		bool		more = TokenizerNext(&tz);
		int			have;

		if (more)
		{
			if (ntokens >= k)
			{
				pfree(tokens[0]);
				memmove(tokens, tokens + 1, (k - 1) * sizeof(char *));
			}
			tokens[Min(ntokens, k - 1)] = pnstrdup(tz.token, tz.token_len);
			ntokens++;
			if (ntokens < k)
				continue;
			have = k;
		}
		else if (ntokens > 0 && ntokens < k)
			have = ntokens;
		else
			break;

		resetStringInfo(&buf);
		for (int i = 0; i < have; i++)
		{
			if (i > 0 && cfg->unit == SHINGLE_UNIT_WORD)
				appendStringInfoChar(&buf, ' ');
			appendStringInfoString(&buf, tokens[i]);
		}
		sink(arg, buf.data, buf.len);
		nshingles++;
		if (!more)
			break;
	}
	pfree(buf.data);
	pfree(tz.word);
	return nshingles;
}

/* ---------------------------------------------------------------------
 * SQL functions
 * ---------------------------------------------------------------------
 */

/* Growable set of 64-bit hashes, kept small by sorting and deduplicating. */
typedef struct HashSet
{
	uint64	   *items;
	size_t		count;
	size_t		capacity;
} HashSet;

/* Byte order of two texts, as strcmp() orders C strings. */
static inline int
TextByteCmp(const text *a, const text *b)
{
	int			la = VARSIZE(a) - VARHDRSZ;
	int			lb = VARSIZE(b) - VARHDRSZ;
	int			c = memcmp(VARDATA(a), VARDATA(b), Min(la, lb));

	return c != 0 ? c : (la > lb) - (la < lb);
}

typedef text *TextP;

/* A sort of texts that honours query cancel (hashes: sort_uint64.h). */
#define ST_SORT sort_texts
#define ST_ELEMENT_TYPE TextP
#define ST_COMPARE(a, b) TextByteCmp(*(a), *(b))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Sort hashes, which are uniform: scattered by their top bits into about one
 * bucket per hash, each bucket then sorted on its own (by insertion while
 * small; a bucket an adversary filled is sorted as any array).  A comparison
 * sort of the whole set was three quarters of the cost of a shingle set of a
 * 10 kB document; one bucket per two hashes cost 6% more than one per hash.
 */
#define HASH_SORT_MIN			64	/* fewer: one comparison sort */
#define HASH_BUCKET_INSERTION	32	/* larger buckets: a comparison sort */
#define HASH_SORT_CHECK_ITEMS	65536	/* hashes counted or scattered between
										 * looks at interrupts */

static void
SortHashes(uint64 *items, size_t n)
{
	int			bits = 1;
	size_t		nbuckets;
	size_t	   *start;
	uint64	   *scattered;

	if (n < HASH_SORT_MIN)
	{
		SortUint64(items, n);
		return;
	}
	while (((size_t) 1 << (bits + 1)) <= n && bits < 24)
		bits++;
	nbuckets = (size_t) 1 << bits;
	start = palloc0((nbuckets + 1) * sizeof(size_t));
	scattered = palloc_extended(n * sizeof(uint64), MCXT_ALLOC_HUGE);

	/* 1. count each bucket, and where it starts */
	for (size_t from = 0; from < n; from += HASH_SORT_CHECK_ITEMS)
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t i = from; i < Min(n, from + HASH_SORT_CHECK_ITEMS); i++)
			start[(items[i] >> (64 - bits)) + 1]++;
	}
	for (size_t b = 0; b < nbuckets; b++)
		start[b + 1] += start[b];
	/* 2. scatter (start[b] moves to the end of bucket b - 1) */
	for (size_t from = 0; from < n; from += HASH_SORT_CHECK_ITEMS)
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t i = from; i < Min(n, from + HASH_SORT_CHECK_ITEMS); i++)
			scattered[start[items[i] >> (64 - bits)]++] = items[i];
	}
	/* 3. sort each bucket back into place */
	for (size_t b = 0, from = 0; b < nbuckets; b++)
	{
		size_t		to = start[b];

		if (to - from > HASH_BUCKET_INSERTION)
			SortUint64(scattered + from, to - from);
		else
			for (size_t i = from + 1; i < to; i++)
			{
				uint64		v = scattered[i];
				size_t		j = i;

				for (; j > from && scattered[j - 1] > v; j--)
					scattered[j] = scattered[j - 1];
				scattered[j] = v;
			}
		from = to;
		if ((b & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	memcpy(items, scattered, n * sizeof(uint64));
	pfree(scattered);
	pfree(start);
}

/* Sort the set and drop repeats. */
static void
HashSetCompact(HashSet *set)
{
	size_t		j = 0;

	SortHashes(set->items, set->count);
	for (size_t i = 0; i < set->count; i++)
		if (j == 0 || set->items[i] != set->items[j - 1])
			set->items[j++] = set->items[i];
	set->count = j;
}

/* Add one hash, compacting or doubling when full. */
static void
HashSetAdd(HashSet *set, uint64 hash)
{
	if (set->count == set->capacity)
	{
		/* repeats are common: compact before growing */
		HashSetCompact(set);
		if (set->count > set->capacity / 2)
		{
			set->capacity *= 2;
			set->items = repalloc_huge(set->items, set->capacity * sizeof(uint64));
		}
	}
	set->items[set->count++] = hash;
}

/* Add a batch of hashes (a ShingleHashSink). */
static void
HashSetAddBatch(void *arg, const uint64 *hashes, int n)
{
	for (int i = 0; i < n; i++)
		HashSetAdd((HashSet *) arg, hashes[i]);
}

/*
 * An empty set with room for the shingles of a text of len bytes, about one
 * a word (at least 1024, at most 64k: past that the set compacts as it
 * fills, so that a text of few distinct shingles stays small), so that most
 * texts are sorted once, when they are done.
 */
#define HASH_SET_MIN	1024
#define HASH_SET_START_MAX	65536

static void
HashSetInit(HashSet *set, size_t len)
{
	set->capacity = Min(Max(len / 5, HASH_SET_MIN), HASH_SET_START_MAX);
	set->count = 0;
	set->items = palloc(set->capacity * sizeof(uint64));
}

/*
 * How many hashes two sorted, distinct runs share: what
 * ndd_shingle_set_jaccard() and containment() both count.
 */
size_t
ShingleSetIntersection(const uint64 *a, size_t na, const uint64 *b, size_t nb)
{
	size_t		i = 0,
				j = 0,
				common = 0;

	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
		{
			common++;
			i++;
			j++;
		}
	}
	return common;
}

/*
 * Jaccard resemblance of two sorted, distinct runs of hashes (0 when either
 * is empty, as jaccard() of a document without shingles is 0).
 */
static double
SortedJaccard(const uint64 *a, size_t na, const uint64 *b, size_t nb)
{
	return ShingleJaccardOfCounts(ShingleSetIntersection(a, na, b, nb), na, nb);
}

/* A config from (shingle_size, unit, strip_html) arguments from first on. */
void
ShingleConfigFromArgs(FunctionCallInfo fcinfo, int first, ShingleConfig *cfg)
{
	int			size = PG_GETARG_INT32(first);
	char	   *unit = text_to_cstring(PG_GETARG_TEXT_PP(first + 1));
	bool		strip_html = PG_GETARG_BOOL(first + 2);

	ShingleConfigInit(cfg, unit, size, strip_html, 0);
}

/*
 * ndd_fingerprint(doc, strip_html): a 64-bit hash of the normalised token
 * stream, so that a UNIQUE index catches exact copies up to case,
 * punctuation, whitespace and markup before any sketch is computed.
 */
PG_FUNCTION_INFO_V1(ndd_fingerprint);
Datum
ndd_fingerprint(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	bool		strip_html = PG_GETARG_BOOL(1);
	ShingleConfig cfg;
	Tokenizer	tz;
	XXH3_state_t state;

	ShingleConfigInit(&cfg, "word", 1, strip_html, 0);
	TokenizerInit(&tz, VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg);
	XXH3_64bits_reset(&state);
	while (TokenizerNext(&tz))
	{
		/* the length first, so that token boundaries count */
		uint32		len = (uint32) tz.token_len;

		XXH3_64bits_update(&state, &len, sizeof(len));
		XXH3_64bits_update(&state, tz.token, tz.token_len);
	}
	pfree(tz.word);
	PG_RETURN_INT64((int64) XXH3_64bits_digest(&state));
}

/*
 * The distinct shingle hashes of a text, sorted as unsigned (palloc'd; *n
 * of them): the set containment() compares (jaccard() compares the same
 * hashes in hash sets: shingle_set.c).
 */
uint64 *
ShingleSetSorted(const char *text, size_t len, const ShingleConfig *cfg, size_t *n)
{
	HashSet		set;

	HashSetInit(&set, len);
	ShingleHashes(text, len, cfg, HashSetAddBatch, &set);
	HashSetCompact(&set);
	*n = set.count;
	return set.items;
}

/*
 * ndd_shingle_set(doc, shingle_size, unit, strip_html): the distinct shingle
 * hashes jaccard() compares, sorted as unsigned, in a bigint[].  Discovery
 * verifies its candidates with them: each document is shingled once, not
 * once per pair it is in.
 */
PG_FUNCTION_INFO_V1(ndd_shingle_set);
Datum
ndd_shingle_set(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	ShingleConfig cfg;
	HashSet		set;
	Datum	   *datums;

	ShingleConfigFromArgs(fcinfo, 1, &cfg);
	HashSetInit(&set, VARSIZE_ANY_EXHDR(doc));
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, HashSetAddBatch, &set);
	HashSetCompact(&set);
	datums = palloc(Max(set.count, 1) * sizeof(Datum));
	for (size_t i = 0; i < set.count; i++)
		datums[i] = Int64GetDatum((int64) set.items[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(datums, (int) set.count, INT8OID,
										  sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The hashes of a shingle set from ndd_shingle_set(), checked to be one. */
static const uint64 *
ShingleSetItems(ArrayType *arr, const char *argname, size_t *n)
{
	const uint64 *items = (const uint64 *) ARR_DATA_PTR(arr);

	if (ARR_NDIM(arr) > 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is not a shingle set", argname),
				 errdetail("A shingle set is a one-dimensional bigint[] without NULLs, from ndd_shingle_set().")));
	*n = ARR_NDIM(arr) == 0 ? 0 : ARR_DIMS(arr)[0];
	for (size_t i = 1; i < *n; i++)
		if (items[i - 1] >= items[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s is not a shingle set", argname),
					 errdetail("Its hashes are not distinct and sorted as unsigned, as ndd_shingle_set() returns them.")));
	return items;
}

/*
 * ndd_shingle_set_jaccard(a, b): the Jaccard resemblance of two shingle
 * sets, which is jaccard() of the two documents they were made from.
 */
PG_FUNCTION_INFO_V1(ndd_shingle_set_jaccard);
Datum
ndd_shingle_set_jaccard(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	size_t		na,
				nb;
	const uint64 *ia = ShingleSetItems(a, "a", &na);
	const uint64 *ib = ShingleSetItems(b, "b", &nb);

	PG_RETURN_FLOAT8(SortedJaccard(ia, na, ib, nb));
}

/*
 * The distinct shingles of show_shingles(), in a hash table from
 * PostgreSQL's simplehash template: memory grows with the distinct shingles,
 * not with the document (a giant run of one character has one).
 */
typedef struct ShingleText
{
	const char *text;			/* UTF-8, as the tokenizer gave it */
	int			len;
} ShingleText;

typedef struct ShingleEntry
{
	ShingleText key;
	text	   *item;			/* the shingle in the database encoding */
	uint32		hash;
	char		status;			/* simplehash's */
} ShingleEntry;

#define SH_PREFIX shingleset
#define SH_ELEMENT_TYPE ShingleEntry
#define SH_KEY_TYPE ShingleText
#define SH_KEY key
#define SH_HASH_KEY(tb, k) ((uint32) NddHashBytes((k).text, (k).len, 0))
#define SH_EQUAL(tb, a, b) ((a).len == (b).len && memcmp((a).text, (b).text, (a).len) == 0)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* texts are packed into blocks of this size: no per-shingle chunk overhead */
#define TEXT_BLOCK_SIZE		((Size) 1024 * 1024)

typedef struct TextCollector
{
	shingleset_hash *set;
	Size		bytes;			/* of the distinct shingles, as array
								 * elements */
	char	   *block;			/* where texts are packed */
	Size		used;
	Size		size;
} TextCollector;

/* A text of len bytes, packed into the collector's current block. */
static text *
PackText(TextCollector *c, const char *data, int len)
{
	Size		need = INTALIGN(VARHDRSZ + len);
	text	   *t;

	if (c->block == NULL || c->used + need > c->size)
	{
		c->size = Max(TEXT_BLOCK_SIZE, need);
		c->block = palloc(c->size);
		c->used = 0;
	}
	t = (text *) (c->block + c->used);
	c->used += need;
	SET_VARSIZE(t, VARHDRSZ + len);
	memcpy(VARDATA(t), data, len);
	return t;
}

/* Keep a shingle (UTF-8, len bytes) unless it was seen before. */
static void
CollectText(void *arg, const char *data, int len)
{
	TextCollector *c = (TextCollector *) arg;
	ShingleText key = {data, len};
	ShingleEntry *entry;
	bool		found;

	entry = shingleset_insert(c->set, key, &found);
	if (found)
		return;
	/* the key must outlive the tokenizer's buffer: it points at our copy */
	entry->item = PackText(c, data, len);
	entry->key.text = VARDATA(entry->item);
	if (GetDatabaseEncoding() != PG_UTF8)
	{
		/* the key stays UTF-8; the item is in the database encoding */
		char	   *converted = pg_any_to_server(data, len, PG_UTF8);

		if (converted != data)
		{
			entry->item = PackText(c, converted, strlen(converted));
			pfree(converted);
		}
	}

	/* an array of text holds at most MaxAllocSize bytes: stop at once */
	c->bytes += INTALIGN(VARSIZE(entry->item));
	if (!AllocSizeIsValid(c->bytes))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the distinct shingles of the document exceed the maximum array size"),
				 errdetail("An array can hold at most %zu bytes.", MaxAllocSize)));
}

/*
 * show_shingles(doc, shingle_size, unit, strip_html): the distinct shingles,
 * in the database encoding (an error if one holds a character it lacks)
 */
PG_FUNCTION_INFO_V1(show_shingles);
Datum
show_shingles(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	ShingleConfig cfg;
	TextCollector c = {0};
	shingleset_iterator it;
	ShingleEntry *entry;
	text	  **items;
	Datum	   *elems;
	uint32		n = 0;

	ShingleConfigFromArgs(fcinfo, 1, &cfg);
	c.set = shingleset_create(CurrentMemoryContext, 64, NULL);
	ShingleTexts(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, CollectText, &c);

	/* sorted, so that the answer does not depend on the hash table */
	items = MemoryContextAllocHuge(CurrentMemoryContext, Max(c.set->members, 1) * sizeof(text *));
	shingleset_start_iterate(c.set, &it);
	while ((entry = shingleset_iterate(c.set, &it)) != NULL)
		items[n++] = entry->item;
	shingleset_destroy(c.set);
	sort_texts(items, n);

	elems = MemoryContextAllocHuge(CurrentMemoryContext, Max(n, 1) * sizeof(Datum));
	for (uint32 i = 0; i < n; i++)
		elems[i] = PointerGetDatum(items[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}
