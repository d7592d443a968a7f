/*
 * minhash_check.h
 *		What every minhash value must satisfy, and the round trips through
 *		text and binary I/O, shared by the two minhash harnesses.
 *
 * An accepted value must be one the sketch functions can make.  The checks
 * here are written apart from minhash.c's: a weighted sketch is checked
 * against weighted_minhash.c's account of its ranks, a plain one against
 * MinHashFromRaw, the function every plain sketch comes from.
 */
#ifndef NDD_FUZZ_MINHASH_CHECK_H
#define NDD_FUZZ_MINHASH_CHECK_H

#include <math.h>

#include "fuzz.h"
#include "base/ndd_limits.h"
#include "sketch/minhash.h"

extern Datum minhash_in(PG_FUNCTION_ARGS);
extern Datum minhash_out(PG_FUNCTION_ARGS);
extern Datum minhash_send(PG_FUNCTION_ARGS);
extern Datum minhash_recv(PG_FUNCTION_ARGS);
extern Datum minhash_similarity(PG_FUNCTION_ARGS);
extern Datum minhash_containment(PG_FUNCTION_ARGS);

/* Abort unless two minhash values are the same bytes. */
static void
CheckSameMinHash(const MinHash *a, const MinHash *b, const char *how)
{
	if (VARSIZE(a) != VARSIZE(b) || memcmp(a, b, VARSIZE(a)) != 0)
		FUZZ_FAIL("%s does not give the same value back", how);
}

/*
 * Abort unless a weighted sketch is one weighted_minhash_sketch can make:
 * nothing filled, and unless empty a rank at every position, a positive
 * normal float4 no larger than the last rank bound, 2^63 / WEIGHT_MIN
 * (whose float4 rounding is below it).
 */
static void
CheckWeightedMinHash(const MinHash *mh)
{
	double		max = ldexp(1.0 / WEIGHTED_MINHASH_WEIGHT_MIN,
							WEIGHTED_MINHASH_MAX_ROUNDS - 1);

	if (mh->flags & MINHASH_FLAG_FILLED)
		FUZZ_FAIL("weighted sketch with filled positions");
	if (mh->flags & MINHASH_FLAG_EMPTY)
		return;
	for (int i = 0; i < mh->num_perm; i++)
	{
		float		r;

		memcpy(&r, &mh->values[i], sizeof(r));
		if (fpclassify(r) != FP_NORMAL || signbit(r) || (double) r > max)
			FUZZ_FAIL("weighted sketch with rank %08x (%g) at %d", mh->values[i], r, i);
	}
}

/*
 * Abort unless a plain sketch that is not empty is what densifying its real
 * positions gives: none holds the empty mark, each filled value is a real
 * one, and MinHashFromRaw of the real positions rebuilds the same bytes.
 */
static void
CheckPlainMinHash(const MinHash *mh)
{
	int			k = mh->num_perm;
	uint32	   *raw;

	if (mh->flags & MINHASH_FLAG_EMPTY)
		return;
	raw = palloc(k * sizeof(uint32));
	for (int i = 0; i < k; i++)
	{
		raw[i] = MINHASH_IS_FILLED(mh, i) ? MINHASH_EMPTY_VALUE : mh->values[i];
		if (!MINHASH_IS_FILLED(mh, i) && mh->values[i] == MINHASH_EMPTY_VALUE)
			FUZZ_FAIL("real position %d holds the empty mark", i);
	}
	for (int i = 0; i < k; i++)
	{
		bool		copied = !MINHASH_IS_FILLED(mh, i);

		for (int j = 0; j < k && !copied; j++)
			copied = raw[j] == mh->values[i];
		if (!copied)
			FUZZ_FAIL("filled position %d holds %08x, no real position's value", i, mh->values[i]);
	}
	CheckSameMinHash(mh, MinHashFromRaw(raw, k, mh->source, mh->shingle_size, mh->seed),
					 "densifying the real positions");
}

/* Abort unless mh is a minhash value the type's invariants allow. */
static void
CheckMinHash(const MinHash *mh)
{
	int			k = mh->num_perm;
	bool		filled = (mh->flags & MINHASH_FLAG_FILLED) != 0;

	if (mh->version != MINHASH_VERSION)
		FUZZ_FAIL("version %d", mh->version);
	if (!NddNumPermIsValid(k))
		FUZZ_FAIL("num_perm %d", k);
	if (mh->source < MINHASH_SOURCE_FIRST || mh->source > MINHASH_SOURCE_LAST)
		FUZZ_FAIL("source %d", mh->source);
	if (MinHashSourceIsArray(mh->source) ? mh->shingle_size != 1 :
		(mh->shingle_size < NDD_SHINGLE_SIZE_MIN || mh->shingle_size > NDD_SHINGLE_SIZE_MAX))
		FUZZ_FAIL("shingle_size %d for source %d", mh->shingle_size, mh->source);
	if ((mh->flags & ~(MINHASH_FLAG_EMPTY | MINHASH_FLAG_FILLED)) != 0 ||
		mh->flags == (MINHASH_FLAG_EMPTY | MINHASH_FLAG_FILLED))
		FUZZ_FAIL("flags %d", mh->flags);
	if (mh->unused != 0)
		FUZZ_FAIL("unused field %d", mh->unused);
	if (VARSIZE(mh) != MINHASH_SIZE(k, filled))
		FUZZ_FAIL("size %u, expected %zu", VARSIZE(mh), (size_t) MINHASH_SIZE(k, filled));
	if (mh->flags & MINHASH_FLAG_EMPTY)
		for (int i = 0; i < k; i++)
			if (mh->values[i] != MINHASH_EMPTY_VALUE)
				FUZZ_FAIL("empty sketch with value %08x at %d", mh->values[i], i);
	if (filled)
	{
		int			n = 0;

		for (int i = 0; i < k; i++)
			n += MINHASH_IS_FILLED(mh, i) ? 1 : 0;
		if (n == 0 || n == k)
			FUZZ_FAIL("%d of %d positions filled", n, k);
		if (k % 32 != 0 && (MINHASH_FILLED_BITMAP(mh)[k / 32] >> (k % 32)) != 0)
			FUZZ_FAIL("filled bits beyond num_perm");
	}
	if (mh->source >= MINHASH_SOURCE_WEIGHTED_WORD)
		CheckWeightedMinHash(mh);
	else
		CheckPlainMinHash(mh);
}

/*
 * Abort unless similarity and containment of a value with itself are 1, or
 * 0 when it is empty: containment reads a weighted sketch's ranks as sizes.
 */
static void
CheckMinHashWithItself(MinHash *mh)
{
	Datum		args[2] = {PointerGetDatum(mh), PointerGetDatum(mh)};
	double		want = (mh->flags & MINHASH_FLAG_EMPTY) ? 0.0 : 1.0;
	Datum		r;

	if (!FuzzCall(minhash_similarity, 2, args, &r))
		FUZZ_FAIL("similarity with itself raised: %s", fuzz_errmsg);
	if (DatumGetFloat8(r) != want)
		FUZZ_FAIL("similarity with itself is %g", DatumGetFloat8(r));
	if (!FuzzCall(minhash_containment, 2, args, &r))
		FUZZ_FAIL("containment in itself raised: %s", fuzz_errmsg);
	if (DatumGetFloat8(r) != want)
		FUZZ_FAIL("containment in itself is %g", DatumGetFloat8(r));
}

/*
 * Abort unless mh survives out -> in and send -> recv unchanged, and send
 * of the received value gives the same bytes (the binary form is canonical
 * for what in and recv produce).
 */
static void
CheckMinHashRoundTrips(MinHash *mh)
{
	Datum		d = PointerGetDatum(mh);
	Datum		text;
	Datum		again;
	Datum		bin;
	Datum		bin2;
	bytea	   *b;

	CheckMinHash(mh);
	CheckMinHashWithItself(mh);
	if (!FuzzCall(minhash_out, 1, &d, &text))
		FUZZ_FAIL("minhash_out raised: %s", fuzz_errmsg);
	if (!FuzzCall(minhash_in, 1, &text, &again))
		FUZZ_FAIL("minhash_in refused what minhash_out wrote (%s): %s",
				  fuzz_errmsg, DatumGetCString(text));
	CheckSameMinHash(mh, (MinHash *) DatumGetPointer(again), "out -> in");

	if (!FuzzCall(minhash_send, 1, &d, &bin))
		FUZZ_FAIL("minhash_send raised: %s", fuzz_errmsg);
	b = (bytea *) DatumGetPointer(bin);
	if (!FuzzRecv(minhash_recv, (const uint8_t *) VARDATA(b), VARSIZE(b) - VARHDRSZ, &again))
		FUZZ_FAIL("minhash_recv refused what minhash_send wrote: %s", fuzz_errmsg);
	CheckSameMinHash(mh, (MinHash *) DatumGetPointer(again), "send -> recv");
	if (!FuzzCall(minhash_send, 1, &again, &bin2))
		FUZZ_FAIL("minhash_send raised: %s", fuzz_errmsg);
	if (VARSIZE(DatumGetPointer(bin2)) != VARSIZE(b) ||
		memcmp(DatumGetPointer(bin2), b, VARSIZE(b)) != 0)
		FUZZ_FAIL("send -> recv -> send changes the bytes");
}

#endif							/* NDD_FUZZ_MINHASH_CHECK_H */
