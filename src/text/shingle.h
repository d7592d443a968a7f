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
extern void ShingleConfigFromArgs(FunctionCallInfo fcinfo, int first,
								  ShingleConfig *cfg);
extern uint64 *ShingleSetSorted(const char *text, size_t len,
								const ShingleConfig *cfg, size_t *n);
extern size_t ShingleSetIntersection(const uint64 *a, size_t na,
									 const uint64 *b, size_t nb);
extern void ElementHashes(ArrayType *arr, const char *argname, uint64 seed,
						  ShingleHashSink sink, void *arg);
extern int64 ShingleTexts(const char *text, size_t len,
						  const ShingleConfig *cfg,
						  ShingleTextSink sink, void *arg);

/*
 * The Jaccard resemblance of two sets of na and nb distinct shingles that
 * share common: 0 when either is empty (a document without shingles
 * resembles nothing).  Every exact Jaccard of ndd is this one expression,
 * so that its ways of counting (sorted runs, hash sets) agree to the bit.
 * For fixed na and nb it never decreases as common grows (the conversions
 * are exact below 2^53 and division rounds monotonically), which is what
 * lets a count stop early (ShingleSetJaccardReaches).
 */
static inline double
ShingleJaccardOfCounts(size_t common, size_t na, size_t nb)
{
	if (na == 0 || nb == 0)
		return 0.0;
	return (double) common / (double) (na + nb - common);
}

#endif							/* NDD_SHINGLE_H */
