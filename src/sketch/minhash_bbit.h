/*
 * minhash_bbit.h
 *		The minhash_bbit type: the lowest b bits of each position of a minhash
 *		sketch (b-bit minwise hashing), and how the sketch was made.
 */
#ifndef NDD_MINHASH_BBIT_H
#define NDD_MINHASH_BBIT_H

#include "fmgr.h"

#define MINHASH_BBIT_VERSION		1

/* flags */
#define MINHASH_BBIT_FLAG_EMPTY		0x01	/* made from no elements at all */

typedef struct MinHashBbit
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	uint8		version;
	uint8		source;			/* MinHashSource of the minhash it came from */
	uint8		shingle_size;
	uint8		flags;
	uint16		num_perm;		/* K */
	uint8		bits;			/* b: 1, 2, 4 or 8 */
	uint8		unused;
	int32		seed;
	uint8		data[FLEXIBLE_ARRAY_MEMBER];	/* K fields of b bits, position
												 * i at bit i*b, from the low
												 * bits of each byte; the bits
												 * past K*b are zero, and all
												 * are zero when empty */
} MinHashBbit;

#define MINHASH_BBIT_HEADER_SIZE	offsetof(MinHashBbit, data)
#define MINHASH_BBIT_DATA_BYTES(k, b)	(((k) * (b) + 7) / 8)
#define MINHASH_BBIT_SIZE(k, b)	(MINHASH_BBIT_HEADER_SIZE + MINHASH_BBIT_DATA_BYTES(k, b))
#define MINHASH_BBIT_BITS_VALID(b)	((b) == 1 || (b) == 2 || (b) == 4 || (b) == 8)

/* The b-bit value of position i. */
#define MINHASH_BBIT_GET(mb, i) \
	(((mb)->data[((i) * (mb)->bits) / 8] >> (((i) * (mb)->bits) % 8)) & \
	 ((1u << (mb)->bits) - 1))

#define DatumGetMinHashBbitP(x)		((MinHashBbit *) PG_DETOAST_DATUM(x))
#define PG_GETARG_MINHASH_BBIT_P(n)	DatumGetMinHashBbitP(PG_GETARG_DATUM(n))
#define PG_RETURN_MINHASH_BBIT_P(x)	PG_RETURN_POINTER(x)

extern double MinHashBbitSimilarity(const MinHashBbit *a, const MinHashBbit *b);

#endif							/* NDD_MINHASH_BBIT_H */
