/*
 * ndd.h
 *		Limits, defaults and GUCs shared by every part of the ndd extension.
 */
#ifndef NDD_H
#define NDD_H

/* PostgreSQL 16 moved the varlena macros (VARDATA, SET_VARSIZE...) here */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* minhash sketch length (K, the number of min-wise hash positions) */
#define NDD_NUM_PERM_DEFAULT		128
#define NDD_NUM_PERM_MIN			16
#define NDD_NUM_PERM_MAX			1024

/* tokens per shingle */
#define NDD_SHINGLE_SIZE_DEFAULT	5
#define NDD_SHINGLE_SIZE_MIN		1
#define NDD_SHINGLE_SIZE_MAX		32

/* threshold of minhash's % operator */
#define NDD_SIMILARITY_THRESHOLD_DEFAULT	0.8

/* minhash GIN operator class: strategies and options */
#define NDD_MINHASH_SIMILAR_STRATEGY		1	/* minhash % minhash */
#define NDD_MINHASH_SIMILAR_QUERY_STRATEGY	2	/* minhash % minhash_query */
#define NDD_GIN_KEY_BITS_DEFAULT	13
#define NDD_GIN_KEY_BITS_MIN		4
#define NDD_GIN_KEY_BITS_MAX		20

/* simhash: threshold of the % operator (Hamming distance in bits) */
#define NDD_SIMHASH_BITS					64
#define NDD_HAMMING_THRESHOLD_DEFAULT		3
#define NDD_HAMMING_THRESHOLD_MIN			0
#define NDD_HAMMING_THRESHOLD_MAX			64

/* simhash GIN and GiST operator classes */
#define NDD_SIMHASH_MAX_DISTANCE_DEFAULT	3
#define NDD_SIMHASH_MAX_DISTANCE_MIN		0
#define NDD_SIMHASH_MAX_DISTANCE_MAX		6
#define NDD_SIMHASH_MATCH_STRATEGY			1	/* simhash % simhash */
#define NDD_SIMHASH_DISTANCE_STRATEGY		2	/* simhash <-> simhash */

/* GUC variables, defined in ndd.c */
extern double ndd_similarity_threshold;
extern int	ndd_hamming_threshold;

#endif							/* NDD_H */
