/*
 * shingle_group.h
 *		The shingle sets of a few texts in one table (discovery's
 *		verification of a family of near-duplicates): each distinct hash
 *		with the texts that hold it, and from that each text's size and each
 *		two texts' common count, with no set probed into another.
 */
#ifndef NDD_SHINGLE_GROUP_H
#define NDD_SHINGLE_GROUP_H

#include "text/shingle.h"

/* texts a group holds at most: one bit each in a 64-bit word */
#define SHINGLE_GROUP_MAX_TEXTS	64

typedef struct ShingleGroup ShingleGroup;

extern ShingleGroup *ShingleGroupCreate(int ntexts, Size budget);
extern bool ShingleGroupAddText(ShingleGroup *group, int member, const char *text, size_t len,
								const ShingleConfig *cfg);
extern void ShingleGroupCount(ShingleGroup *group);
extern double ShingleGroupJaccard(const ShingleGroup *group, int a, int b);

#endif							/* NDD_SHINGLE_GROUP_H */
