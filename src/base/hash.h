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

/*
 * The same value as NddHashBytes, inlined at the call site for the short
 * inputs of the shingle loop (a word, a window of token hashes): XXH3's own
 * code for 0-16 and 17-128 bytes, without the call and the dispatch over
 * every length.  Those internals are those of xxHash 0.8, whose XXH3 values
 * are frozen; any other version takes the library's entry point.
 */
static pg_attribute_always_inline uint64
NddHashShort(const void *data, size_t len, uint64 seed)
{
#if XXH_VERSION_MAJOR == 0 && XXH_VERSION_MINOR == 8
	if (len <= 16)
		return (uint64) XXH3_len_0to16_64b((const xxh_u8 *) data, len,
										   XXH3_kSecret, (XXH64_hash_t) seed);
	if (len <= 128)
		return (uint64) XXH3_len_17to128_64b((const xxh_u8 *) data, len,
											 XXH3_kSecret, sizeof(XXH3_kSecret),
											 (XXH64_hash_t) seed);
#endif
	return NddHashBytes(data, len, seed);
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
