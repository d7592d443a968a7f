/*
 * ndd.h
 *		Limits, defaults and GUCs shared by every part of the ndd extension.
 */
#ifndef NDD_H
#define NDD_H

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

/* GUC variables, defined in ndd.c */
extern double ndd_similarity_threshold;

#endif							/* NDD_H */
