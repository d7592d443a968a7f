/*
 * containment_gin.h
 *		What contamination_pairs asks of a containment_ops index: the
 *		shingling of its column.
 */
#ifndef NDD_CONTAINMENT_GIN_H
#define NDD_CONTAINMENT_GIN_H

#include "text/shingle.h"

/* The shingling of a containment_ops index column, from its parsed options. */
extern void ContainmentIndexShingling(const bytea *options, ShingleConfig *cfg);

#endif							/* NDD_CONTAINMENT_GIN_H */
