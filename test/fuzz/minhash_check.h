/*
 * minhash_check.h
 *		What every minhash value must satisfy, and the round trips through
 *		text and binary I/O, shared by the two minhash harnesses.
 */
#ifndef NDD_FUZZ_MINHASH_CHECK_H
#define NDD_FUZZ_MINHASH_CHECK_H

#include "fuzz.h"
#include "minhash.h"
#include "ndd.h"

extern Datum minhash_in(PG_FUNCTION_ARGS);
extern Datum minhash_out(PG_FUNCTION_ARGS);
extern Datum minhash_send(PG_FUNCTION_ARGS);
extern Datum minhash_recv(PG_FUNCTION_ARGS);

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
}

/* Abort unless two minhash values are the same bytes. */
static void
CheckSameMinHash(const MinHash *a, const MinHash *b, const char *how)
{
	if (VARSIZE(a) != VARSIZE(b) || memcmp(a, b, VARSIZE(a)) != 0)
		FUZZ_FAIL("%s does not give the same value back", how);
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
