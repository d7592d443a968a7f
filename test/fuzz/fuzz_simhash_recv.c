/*
 * fuzz_simhash_recv.c
 *		simhash_recv on arbitrary bytes: recv accepts exactly what in accepts.
 *		Exactly 8 bytes are a fingerprint (their big-endian value); anything
 *		else is refused with 08P01 or 22P03.  An accepted value's text form
 *		is read back by simhash_in to the same value, and its binary form is
 *		the bytes received.
 */
#include "fuzz.h"
#include "sketch/simhash.h"

extern Datum simhash_in(PG_FUNCTION_ARGS);
extern Datum simhash_out(PG_FUNCTION_ARGS);
extern Datum simhash_send(PG_FUNCTION_ARGS);
extern Datum simhash_recv(PG_FUNCTION_ARGS);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Datum		v;
	Datum		text;
	Datum		again;
	Datum		bin;

	if (!FuzzRecv(simhash_recv, data, size, &v))
	{
		if (fuzz_sqlerrcode != ERRCODE_PROTOCOL_VIOLATION &&
			fuzz_sqlerrcode != ERRCODE_INVALID_BINARY_REPRESENTATION)
			FUZZ_FAIL("simhash_recv refused with SQLSTATE %s: %s",
					  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
		if (size == 8)
			FUZZ_FAIL("simhash_recv refused 8 bytes: %s", fuzz_errmsg);
	}
	else
	{
		uint64		expected = 0;

		if (size != 8)
			FUZZ_FAIL("simhash_recv accepted %zu bytes", size);
		for (int i = 0; i < 8; i++)
			expected = (expected << 8) | data[i];
		if (DatumGetSimHash(v) != expected)
			FUZZ_FAIL("simhash_recv read the wrong value");
		if (!FuzzCall(simhash_out, 1, &v, &text) ||
			!FuzzCall(simhash_in, 1, &text, &again) || again != v)
			FUZZ_FAIL("in refuses or changes what recv accepted");
		if (!FuzzCall(simhash_send, 1, &v, &bin) ||
			VARSIZE(DatumGetPointer(bin)) != VARHDRSZ + 8 ||
			memcmp(VARDATA(DatumGetPointer(bin)), data, 8) != 0)
			FUZZ_FAIL("send does not give the bytes received");
	}
	FuzzReset();
	return 0;
}
