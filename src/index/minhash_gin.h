/*
 * minhash_gin.h
 *		What other parts of ndd may ask of a minhash_ops GIN index.
 */
#ifndef NDD_MINHASH_GIN_H
#define NDD_MINHASH_GIN_H

#include "utils/rel.h"

#include "sketch/minhash.h"

extern Datum *MinHashGinIndexKeys(Relation index, int attno, const MinHash *mh,
								  int32 *nkeys, int *bands, int *rows);
extern void MinHashGinBanding(Relation index, int attno, int *bands, int *rows);
extern bool MinHashGinIsExact(Relation index, int attno, double threshold,
							  int *bands, int *rows);
extern double MinHashGinLowestExact(Relation index, int attno);

/* minhash_index_tables.c: the operator family in ndd's schema */
extern Oid	MinHashGinFamily(Oid ndd_function);

#endif							/* NDD_MINHASH_GIN_H */
