/*
 * minhash_gin.h
 *		What other parts of ndd may ask of a minhash_ops GIN index.
 */
#ifndef NDD_MINHASH_GIN_H
#define NDD_MINHASH_GIN_H

#include "utils/rel.h"

extern bool MinHashGinIsExact(Relation index, int attno, double threshold,
							  int *bands, int *rows);

#endif							/* NDD_MINHASH_GIN_H */
