/*
 * containment.h
 *		What the index of containment (index/containment_gin.c) and
 *		contamination_pairs ask of containment.c: a containment_query read,
 *		and whether two shinglings give the same shingles.
 */
#ifndef NDD_CONTAINMENT_H
#define NDD_CONTAINMENT_H

#include "text/shingle.h"

/* A passage, its threshold and its shingling, from a containment_query. */
typedef struct ContainmentQuery
{
	text	   *passage;
	double		threshold;
	ShingleConfig cfg;
} ContainmentQuery;

/*
 * The fields of a containment_query; false if any is NULL (no row matches).
 * A query stored out of line is fetched honouring query cancel.
 */
extern bool ContainmentReadQuery(Datum query, ContainmentQuery *q);

/* Do two shinglings give the same shingles? */
extern bool ContainmentSameShingling(const ShingleConfig *a, const ShingleConfig *b);

#endif							/* NDD_CONTAINMENT_H */
