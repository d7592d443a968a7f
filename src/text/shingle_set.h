/*
 * shingle_set.h
 *		A text's distinct shingle hashes in an open-addressing hash set, built
 *		without a sort, and the exact Jaccard resemblance of two such sets,
 *		with a test that stops counting once a threshold is out of reach.
 */
#ifndef NDD_SHINGLE_SET_H
#define NDD_SHINGLE_SET_H

#include "text/shingle.h"

/*
 * The value of a free slot.  The hash equal to it is a member like any
 * other, kept out of the slots: has_free_value says whether it is in.
 */
#define SHINGLE_SET_FREE	UINT64CONST(0)

/*
 * Distinct 64-bit hashes in a power-of-two table of slots, probed linearly,
 * never more than half full.  Its memory is in the context that was current
 * when it was made.
 */
typedef struct ShingleSet
{
	uint64	   *slots;
	size_t		mask;			/* the number of slots, less one */
	int			shift;			/* 64 less log2 of the number of slots */
	size_t		nslotted;		/* hashes in slots */
	bool		has_free_value; /* SHINGLE_SET_FREE is a member */
	uint64	   *members;		/* after ShingleSetFit: the slotted hashes in a
								 * row, to probe with; else NULL */
} ShingleSet;

/* The number of distinct hashes in the set. */
static inline size_t
ShingleSetSize(const ShingleSet *set)
{
	return set->nslotted + (set->has_free_value ? 1 : 0);
}

extern uint64 ShingleSetSalt(void);
extern ShingleSet *ShingleSetCreate(size_t expected);
extern void ShingleSetAdd(ShingleSet *set, uint64 hash);
extern void ShingleSetAddBatch(void *arg, const uint64 *hashes, int n);
extern bool ShingleSetContains(const ShingleSet *set, uint64 hash);
extern void ShingleSetFit(ShingleSet *set);
extern ShingleSet *ShingleSetOfTextFitted(const char *text, size_t len,
										  const ShingleConfig *cfg);
extern ShingleSet *ShingleSetCopy(const ShingleSet *set);
extern Size ShingleSetBytes(const ShingleSet *set);
extern void ShingleSetFree(ShingleSet *set);

extern ShingleSet *ShingleSetOfText(const char *text, size_t len,
									const ShingleConfig *cfg);

extern double ShingleSetJaccard(const ShingleSet *a, const ShingleSet *b);
extern bool ShingleSetJaccardReaches(const ShingleSet *a, const ShingleSet *b,
									 double threshold, double *jaccard);

#endif							/* NDD_SHINGLE_SET_H */
