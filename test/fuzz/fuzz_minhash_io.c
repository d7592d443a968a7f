/*
 * fuzz_minhash_io.c
 *		minhash_in on arbitrary text.  A refused literal must be refused with
 *		22P02; an accepted one must be a value the sketch functions can make
 *		(minhash_check.h), similar to and contained in itself, that survives
 *		out -> in and send -> recv byte for byte.
 */
#include "minhash_check.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *input = malloc(size + 1);
	Datum		arg;
	Datum		result;

	/* a cstring: what follows a NUL never reaches an input function */
	memcpy(input, data, size);
	input[size] = '\0';
	arg = CStringGetDatum(input);
	if (FuzzCall(minhash_in, 1, &arg, &result))
		CheckMinHashRoundTrips((MinHash *) DatumGetPointer(result));
	else if (fuzz_sqlerrcode != ERRCODE_INVALID_TEXT_REPRESENTATION)
		FUZZ_FAIL("minhash_in refused with SQLSTATE %s: %s",
				  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
	FuzzReset();
	free(input);
	return 0;
}
