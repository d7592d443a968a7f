/*
 * fuzz_simhash_io.c
 *		simhash_in on arbitrary text, against an independent reading of the
 *		syntax (16 hex digits, C-locale blanks around them): it accepts exactly
 *		those literals, with their value, and refuses the rest with 22P02.  An
 *		accepted value survives out -> in and send -> recv.
 */
#include "fuzz.h"
#include "sketch/simhash.h"

extern Datum simhash_in(PG_FUNCTION_ARGS);
extern Datum simhash_out(PG_FUNCTION_ARGS);
extern Datum simhash_send(PG_FUNCTION_ARGS);
extern Datum simhash_recv(PG_FUNCTION_ARGS);

/* The value of a literal by the documented syntax; false if it has none. */
static bool
Oracle(const char *s, uint64 *v)
{
	const char *p = s;
	int			n = 0;

	*v = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	for (; n < 16; n++, p++)
	{
		int			d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return false;
		*v = (*v << 4) | d;
	}
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	return *p == '\0';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *input = malloc(size + 1);
	Datum		arg;
	Datum		v;
	Datum		text;
	Datum		again;
	Datum		bin;
	uint64		expected;
	bool		valid;
	bytea	   *b;

	memcpy(input, data, size);
	input[size] = '\0';
	valid = Oracle(input, &expected);
	arg = CStringGetDatum(input);
	if (!FuzzCall(simhash_in, 1, &arg, &v))
	{
		if (fuzz_sqlerrcode != ERRCODE_INVALID_TEXT_REPRESENTATION)
			FUZZ_FAIL("simhash_in refused with SQLSTATE %s: %s",
					  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
		if (valid)
			FUZZ_FAIL("simhash_in refused a valid literal: %s", fuzz_errmsg);
	}
	else
	{
		if (!valid)
			FUZZ_FAIL("simhash_in accepted an invalid literal");
		if (DatumGetSimHash(v) != expected)
			FUZZ_FAIL("simhash_in read %016llx, expected %016llx",
					  (unsigned long long) DatumGetSimHash(v),
					  (unsigned long long) expected);
		if (!FuzzCall(simhash_out, 1, &v, &text) ||
			!FuzzCall(simhash_in, 1, &text, &again) || again != v)
			FUZZ_FAIL("out -> in does not give the value back");
		if (!FuzzCall(simhash_send, 1, &v, &bin))
			FUZZ_FAIL("simhash_send raised: %s", fuzz_errmsg);
		b = (bytea *) DatumGetPointer(bin);
		if (!FuzzRecv(simhash_recv, (const uint8_t *) VARDATA(b), VARSIZE(b) - VARHDRSZ, &again) ||
			again != v)
			FUZZ_FAIL("send -> recv does not give the value back");
	}
	FuzzReset();
	free(input);
	return 0;
}
