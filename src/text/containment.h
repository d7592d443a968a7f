/*
 * containment.h
 *		What contamination_pairs asks of containment.c: the shingling of a
 *		containment_ops index column.
 */
#ifndef NDD_CONTAINMENT_H
#define NDD_CONTAINMENT_H

#include "text/shingle.h"

/* The shingling of a containment_ops index column, from its parsed options. */
extern void ContainmentIndexShingling(const bytea *options, ShingleConfig *cfg);

/* Do two shinglings give the same shingles? */
extern bool ContainmentSameShingling(const ShingleConfig *a, const ShingleConfig *b);

#endif							/* NDD_CONTAINMENT_H */
