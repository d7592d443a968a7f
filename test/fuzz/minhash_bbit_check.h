/*
 * minhash_bbit_check.h
 *		What every minhash_bbit value must satisfy, and the round trips
 *		through text and binary I/O, shared by the two minhash_bbit harnesses.
 */
#ifndef NDD_FUZZ_MINHASH_BBIT_CHECK_H
#define NDD_FUZZ_MINHASH_BBIT_CHECK_H

#include "fuzz.h"
#include "base/ndd_limits.h"
#include "sketch/minhash.h"
#include "sketch/minhash_bbit.h"

extern Datum minhash_bbit_in(PG_FUNCTION_ARGS);
extern Datum minhash_bbit_out(PG_FUNCTION_ARGS);
extern Datum minhash_bbit_send(PG_FUNCTION_ARGS);
extern Datum minhash_bbit_recv(PG_FUNCTION_ARGS);
extern Datum minhash_bbit_similarity(PG_FUNCTION_ARGS);

/* Abort unless mb is a minhash_bbit value the type's invariants allow. */
static void
CheckMinHashBbit(const MinHashBbit *mb)
{
	int			k = mb->num_perm;
	int			nbytes;
	int			used;

	if (mb->version != MINHASH_BBIT_VERSION)
		FUZZ_FAIL("version %d", mb->version);
	if (!NddNumPermIsValid(k))
		FUZZ_FAIL("num_perm %d", k);
	if (!MINHASH_BBIT_BITS_VALID(mb->bits))
		FUZZ_FAIL("b %d", mb->bits);
	if (mb->source < MINHASH_SOURCE_FIRST || mb->source > MINHASH_SOURCE_LAST)
		FUZZ_FAIL("source %d", mb->source);
	if (MinHashSourceIsArray(mb->source) ? mb->shingle_size != 1 :
		(mb->shingle_size < NDD_SHINGLE_SIZE_MIN || mb->shingle_size > NDD_SHINGLE_SIZE_MAX))
		FUZZ_FAIL("shingle_size %d for source %d", mb->shingle_size, mb->source);
	if ((mb->flags & ~MINHASH_BBIT_FLAG_EMPTY) != 0)
		FUZZ_FAIL("flags %d", mb->flags);
	if (mb->unused != 0)
		FUZZ_FAIL("unused field %d", mb->unused);
	if (VARSIZE(mb) != MINHASH_BBIT_SIZE(k, mb->bits))
		FUZZ_FAIL("size %u, expected %zu", VARSIZE(mb), (size_t) MINHASH_BBIT_SIZE(k, mb->bits));
	nbytes = MINHASH_BBIT_DATA_BYTES(k, mb->bits);
	used = (k * mb->bits) % 8;
	if (used != 0 && (mb->data[nbytes - 1] >> used) != 0)
		FUZZ_FAIL("bits set past num_perm * b");
	if (mb->flags & MINHASH_BBIT_FLAG_EMPTY)
		for (int i = 0; i < nbytes; i++)
			if (mb->data[i] != 0)
				FUZZ_FAIL("empty sketch with payload byte %02x at %d", mb->data[i], i);
}

/* Abort unless two minhash_bbit values are the same bytes. */
static void
CheckSameMinHashBbit(const MinHashBbit *a, const MinHashBbit *b, const char *how)
{
	if (VARSIZE(a) != VARSIZE(b) || memcmp(a, b, VARSIZE(a)) != 0)
		FUZZ_FAIL("%s does not give the same value back", how);
}

/*
 * Abort unless mb survives out -> in and send -> recv unchanged, send of the
 * received value gives the same bytes, and similarity with itself is 1 (0
 * for an empty document).
 */
static void
CheckMinHashBbitRoundTrips(MinHashBbit *mb)
{
	Datum		d = PointerGetDatum(mb);
	Datum		args[2] = {d, d};
	Datum		text;
	Datum		again;
	Datum		bin;
	Datum		bin2;
	Datum		sim;
	bytea	   *b;

	CheckMinHashBbit(mb);
	if (!FuzzCall(minhash_bbit_out, 1, &d, &text))
		FUZZ_FAIL("minhash_bbit_out raised: %s", fuzz_errmsg);
	if (!FuzzCall(minhash_bbit_in, 1, &text, &again))
		FUZZ_FAIL("minhash_bbit_in refused what minhash_bbit_out wrote (%s): %s",
				  fuzz_errmsg, DatumGetCString(text));
	CheckSameMinHashBbit(mb, (MinHashBbit *) DatumGetPointer(again), "out -> in");

	if (!FuzzCall(minhash_bbit_send, 1, &d, &bin))
		FUZZ_FAIL("minhash_bbit_send raised: %s", fuzz_errmsg);
	b = (bytea *) DatumGetPointer(bin);
	if (!FuzzRecv(minhash_bbit_recv, (const uint8_t *) VARDATA(b), VARSIZE(b) - VARHDRSZ, &again))
		FUZZ_FAIL("minhash_bbit_recv refused what minhash_bbit_send wrote: %s", fuzz_errmsg);
	CheckSameMinHashBbit(mb, (MinHashBbit *) DatumGetPointer(again), "send -> recv");
	if (!FuzzCall(minhash_bbit_send, 1, &again, &bin2))
		FUZZ_FAIL("minhash_bbit_send raised: %s", fuzz_errmsg);
	if (VARSIZE(DatumGetPointer(bin2)) != VARSIZE(b) ||
		memcmp(DatumGetPointer(bin2), b, VARSIZE(b)) != 0)
		FUZZ_FAIL("send -> recv -> send changes the bytes");

	if (!FuzzCall(minhash_bbit_similarity, 2, args, &sim))
		FUZZ_FAIL("similarity raised: %s", fuzz_errmsg);
	if (DatumGetFloat8(sim) != ((mb->flags & MINHASH_BBIT_FLAG_EMPTY) ? 0.0 : 1.0))
		FUZZ_FAIL("similarity with itself is %g", DatumGetFloat8(sim));
}

#endif							/* NDD_FUZZ_MINHASH_BBIT_CHECK_H */
