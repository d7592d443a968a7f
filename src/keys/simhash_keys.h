/*
 * simhash_keys.h
 *		Block keys of simhash fingerprints (Manku, Jain and Das Sarma): two
 *		fingerprints within k bits share enough keys, by pigeonhole.  Used by
 *		the GIN operator class, all-pairs discovery and the trigger.
 */
#ifndef NDD_SIMHASH_KEYS_H
#define NDD_SIMHASH_KEYS_H

#include "base/ndd_limits.h"
#include "sketch/simhash.h"

/* what a key is: a pair of blocks of one half, or one block */
#define SIMHASH_KEYS_PAIRS		1
#define SIMHASH_KEYS_BLOCKS		2

/* pairs of k / 2 + 2 blocks in two halves, or k + 2 blocks */
#define SIMHASH_MAX_BLOCKS		(NDD_SIMHASH_MAX_DISTANCE_MAX + 4)
#define SIMHASH_MAX_KEYS \
	(2 * (NDD_SIMHASH_MAX_DISTANCE_MAX / 2 + 2) * (NDD_SIMHASH_MAX_DISTANCE_MAX / 2 + 1) / 2)

/* Where the blocks lie and which blocks make each key. */
typedef struct SimHashKeyLayout
{
	int			ngroups;		/* 1 (blocks) or 2 halves (pairs) */
	int			group_blocks;	/* blocks per group */
	int			key_blocks;		/* blocks per key: 1 or 2 */
	int			nkeys;
	int			shift[SIMHASH_MAX_BLOCKS];
	int			len[SIMHASH_MAX_BLOCKS];
	int			key[SIMHASH_MAX_KEYS][2];	/* block numbers */
} SimHashKeyLayout;

extern void SimHashKeyLayoutInit(SimHashKeyLayout *layout, int max_distance, int keys);
extern Datum *SimHashKeys(const SimHashKeyLayout *layout, SimHash v);
extern int	SimHashRequiredKeys(const SimHashKeyLayout *layout, int t);

#endif							/* NDD_SIMHASH_KEYS_H */
