/*
 * bucket_keys.h
 *		The bucket keys of one kind of sketch, from C: what the discovery
 *		engine asks of a row (its keys, a small summary), of two rows that
 *		share a key (are their summaries close enough), and of a candidate
 *		pair (its score, and whether it qualifies).  The C twin of the SQL
 *		fragments of sketch_sql.h, computing the same values through the
 *		same functions, so either path gives the same answer.
 *
 * Minhash's are in lsh.c (LSH band keys, low bits), simhash's in
 * simhash_keys.c (block keys, the fingerprint itself).
 */
#ifndef NDD_BUCKET_KEYS_H
#define NDD_BUCKET_KEYS_H

#include "keys/simhash_keys.h"

typedef struct BucketKeys BucketKeys;

struct BucketKeys
{
	int			max_keys;		/* keys per row, at most */
	int			summary_words;	/* uint64 words of a row's summary */

	/*
	 * a sketch's keys and summary; how many keys (0: it has none).  keys
	 * NULL: the summary alone, for a row whose keys are known; summary
	 * NULL: the keys alone, for a pass that only counts them.
	 */
	int			(*keys) (const BucketKeys *bk, Datum sketch, uint64 *keys, uint64 *summary);
	/* a necessary test of two rows that share a key, on their summaries */
	bool		(*close_enough) (const BucketKeys *bk, const uint64 *x, const uint64 *y);
	/* the score of a pair, as discovery reports it, and whether it qualifies */
	bool		(*score) (const BucketKeys *bk, Datum a, Datum b,
						  double *similarity, int32 *distance, bool *distance_null);

	/* minhash: bands of rows positions, codes a pair must agree on, the limit */
	int			bands;
	int			rows;
	int			min_agreement;
	double		lower;

	/* simhash: the block keys within max_distance bits */
	int			max_distance;
	SimHashKeyLayout layout;
};

/* minhash sketches of num_perm positions, banded as the plan says */
extern void BucketKeysMinhash(BucketKeys *bk, int num_perm, int bands, int rows,
							  int required, double lower);

/* simhash fingerprints within max_distance bits */
extern void BucketKeysSimhash(BucketKeys *bk, int max_distance);

#endif							/* NDD_BUCKET_KEYS_H */
