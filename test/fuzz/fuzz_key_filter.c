/*
 * fuzz_key_filter.c
 *		The key filter that ndd_colliding(keys, filter, drop_frequent) takes
 *		as a bytea, on arbitrary bytes, and the aggregate's deserialfn.
 *
 * Input: byte 0: bit 0 places the filter 4 bytes off an 8-byte boundary,
 * as a bytea of 4-byte alignment sits in a tuple (a CTE's, a sort's) when
 * it is passed without a copy; bit 1 feeds the bytes to the deserialfn
 * instead.  Bytes 1-2: drop_frequent (int16, may be negative).  Byte 3: the
 * number of keys, then 8 bytes per key; the rest is the bytea's contents.
 *
 * Checks: ndd_colliding refuses only with 22023; what it returns is a
 * subsequence of the keys, less the dropped ones.  The deserialfn is
 * internal (elog is fine there) but must not read past its input.
 */
#include "fuzz.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

extern Datum ndd_colliding(PG_FUNCTION_ARGS);
extern Datum ndd_colliding_keys_deserialfn(PG_FUNCTION_ARGS);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t		flags;
	int16		drop;
	int			n;
	Datum	   *elems;
	ArrayType  *keys;
	char	   *mem;
	struct varlena *filter;
	size_t		flen;
	Datum		args[3];
	Datum		res;

	if (size < 4)
		return 0;
	flags = data[0];
	drop = (int16) ((data[1] << 8) | data[2]);
	n = data[3];
	data += 4;
	size -= 4;
	if (size < (size_t) n * 8)
		n = size / 8;
	elems = palloc(Max(n, 1) * sizeof(Datum));
	for (int i = 0; i < n; i++)
	{
		int64		k;

		memcpy(&k, data + 8 * i, 8);
		elems[i] = Int64GetDatum(k);
	}
	keys = construct_array(elems, n, INT8OID, 8, true, TYPALIGN_DOUBLE);
	data += 8 * n;
	size -= 8 * n;

	/* exactly the bytea's bytes, from an 8-byte boundary or 4 bytes past */
	flen = VARHDRSZ + size;
	mem = malloc(flen + 4);
	filter = (struct varlena *) (mem + ((flags & 1) ? 4 : 0));
	SET_VARSIZE(filter, flen);
	memcpy(VARDATA(filter), data, size);

	if (flags & 2)
	{
		args[0] = PointerGetDatum(filter);
		args[1] = PointerGetDatum(NULL);
		(void) FuzzCall(ndd_colliding_keys_deserialfn, 2, args, &res);
	}
	else
	{
		args[0] = PointerGetDatum(keys);
		args[1] = PointerGetDatum(filter);
		args[2] = Int32GetDatum(drop);
		if (FuzzCall(ndd_colliding, 3, args, &res))
		{
			ArrayType  *kept = (ArrayType *) DatumGetPointer(res);
			int			nkept = ArrayGetNItems(ARR_NDIM(kept), ARR_DIMS(kept));
			int			j = 0;

			if (drop < 0)
				FUZZ_FAIL("negative drop_frequent accepted");
			if (nkept > n - Min(drop, n))
				FUZZ_FAIL("%d keys kept of %d, dropping %d", nkept, n, drop);
			for (int i = 0; i < nkept; i++)
			{
				int64		k;

				memcpy(&k, ARR_DATA_PTR(kept) + 8 * i, 8);
				while (j < n && DatumGetInt64(elems[j]) != k)
					j++;
				if (j == n)
					FUZZ_FAIL("kept key %lld is not a key, or out of order", (long long) k);
				j++;
			}
		}
		else if (fuzz_sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE)
			FUZZ_FAIL("ndd_colliding refused with SQLSTATE %s: %s",
					  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
	}
	FuzzReset();
	free(mem);
	return 0;
}
