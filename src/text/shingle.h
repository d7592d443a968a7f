/*
 * shingle.h
 *		Text to shingles: normalisation, tokens and seeded shingle hashes,
 *		shared by every sketch so that all of them see the same features.
 */
#ifndef NDD_SHINGLE_H
#define NDD_SHINGLE_H

#include "fmgr.h"
#include "utils/array.h"

/* What a token is. */
typedef enum ShingleUnit
{
	SHINGLE_UNIT_WORD = 1,		/* words; scripts without spaces: one
								 * character per word */
	SHINGLE_UNIT_CHAR = 2		/* characters, one space between words */
} ShingleUnit;

/* How a document is turned into shingles. */
typedef struct ShingleConfig
{
	ShingleUnit unit;
	int			size;			/* tokens per shingle */
	bool		strip_html;		/* drop tags, scripts, styles; decode
								 * entities */
	uint64		seed;			/* seed of every hash */
} ShingleConfig;

/*
 * Receives the hashes of shingles, in document order, repeats included, a
 * batch at a time (one call per shingle would cost more than the shingle).
 */
typedef void (*ShingleHashSink) (void *arg, const uint64 *hashes, int n);

/* Receives the text of each shingle (not NUL-terminated). */
typedef void (*ShingleTextSink) (void *arg, const char *text, int len);

extern ShingleUnit ShingleUnitFromName(const char *name);
extern const char *ShingleUnitName(ShingleUnit unit);
extern void ShingleConfigInit(ShingleConfig *cfg, const char *unit_name,
							  int size, bool strip_html, uint64 seed);

extern int64 ShingleHashes(const char *text, size_t len,
						   const ShingleConfig *cfg,
						   ShingleHashSink sink, void *arg);
extern uint64 *ShingleSet(const char *text, size_t len,
						  const ShingleConfig *cfg, size_t *n);
extern size_t ShingleSetIntersection(const uint64 *a, size_t na,
									 const uint64 *b, size_t nb);
extern void ElementHashes(ArrayType *arr, const char *argname, uint64 seed,
						  ShingleHashSink sink, void *arg);
extern int64 ShingleTexts(const char *text, size_t len,
						  const ShingleConfig *cfg,
						  ShingleTextSink sink, void *arg);

#endif							/* NDD_SHINGLE_H */
