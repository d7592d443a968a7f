/*
 * hash.h
 *		Seeded 64-bit hashing for every sketch: XXH3 from the system xxHash.
 *
 * The header-only build of the system libxxhash is used (XXH_INLINE_ALL) so
 * the short inputs we hash, words and windows of a few token hashes, are
 * hashed without a library call each.
 */
#ifndef NDD_HASH_H
#define NDD_HASH_H

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Hash a byte string with a seed. */
static inline uint64
NddHashBytes(const void *data, size_t len, uint64 seed)
{
	return (uint64) XXH3_64bits_withSeed(data, len, (XXH64_hash_t) seed);
}

/* Scramble one 64-bit integer (the splitmix64 finaliser); cheap and bijective. */
static inline uint64
NddHashMix(uint64 x)
{
	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

/* Map a 32-bit hash uniformly onto 0 .. n-1 without a division. */
static inline uint32
NddHashRange(uint32 h, uint32 n)
{
	return (uint32) (((uint64) h * n) >> 32);
}

#endif							/* NDD_HASH_H */
