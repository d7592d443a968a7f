/*
 * fuzz_minhash_recv.c
 *		minhash_recv on arbitrary bytes: recv accepts exactly what in accepts.
 *		A refused value must be refused with 22P02 (bad fields), 08P01 (too
 *		short) or 22P03 (bytes left over); an accepted one must be a value
 *		the sketch functions can make (minhash_check.h) whose text form
 *		minhash_in accepts and reads back to the same bytes, and whose binary
 *		form is received back unchanged.
 */
#include "minhash_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Datum		result;

	if (FuzzRecv(minhash_recv, data, size, &result))
		CheckMinHashRoundTrips((MinHash *) DatumGetPointer(result));
	else if (fuzz_sqlerrcode != ERRCODE_INVALID_TEXT_REPRESENTATION &&
			 fuzz_sqlerrcode != ERRCODE_PROTOCOL_VIOLATION &&
			 fuzz_sqlerrcode != ERRCODE_INVALID_BINARY_REPRESENTATION)
		FUZZ_FAIL("minhash_recv refused with SQLSTATE %s: %s",
				  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
	FuzzReset();
	return 0;
}
