/*
 * fuzz_radix_sort.c
 *		The discovery engine's radix sort and grouping (base/radix_sort.c)
 *		on arbitrary records, against a plain stable sort.
 *
 * Input: byte 0: the record's width (12, 16, 24 or 48 bytes), the
 * field's place in it (first or second word), and the hash bits the
 * grouping sorts by (its own choice, or 11, 22 or 33); byte 1: how many low bits of each
 * field to keep (1 to 64), so that fields repeat and runs form, and
 * whether to keep high bits instead (heap positions, whose high digits one
 * range shares); the rest, the records' bytes.  Each record's last word
 * (4 bytes of a 12-byte record) is its place in the input, to check
 * stability.
 *
 * Checks: RadixSortRecords orders the records by field, equal fields in
 * input order, as a stable comparison sort does, and RadixSortRecords32
 * by the field's first four bytes as a uint32; RadixGroupRecords keeps
 * every record, puts equal fields together (one run per field), each run
 * in input order, and RadixGroupRecords32 the same for the first four
 * bytes.
 */
#include "fuzz.h"

#include "base/radix_sort.h"

typedef struct Keyed
{
	uint64		field;
	uint64		place;
} Keyed;

static int
CompareKeyed(const void *a, const void *b)
{
	const Keyed *x = a;
	const Keyed *y = b;

	if (x->field != y->field)
		return x->field < y->field ? -1 : 1;
	return x->place < y->place ? -1 : x->place > y->place;
}

static uint32
Word32(const char *record, size_t offset)
{
	uint32		v;

	memcpy(&v, record + offset, 4);
	return v;
}

static uint64
Word(const char *record, size_t offset)
{
	uint64		v;

	memcpy(&v, record + offset, 8);
	return v;
}

/* A record's place in the input: its last 4 or 8 bytes. */
static uint64
PlaceOf(const char *record, size_t width)
{
	uint32		p4;

	if (width != 12)
		return Word(record, width - 8);
	memcpy(&p4, record + 8, 4);
	return p4;
}

/* The records in expect's order: the field (all 8 bytes, or the first 4) and the place. */
static void
CheckOrder(const char *records, size_t n, size_t width, size_t offset, bool narrow,
		   const Keyed *expect)
{
	for (size_t i = 0; i < n; i++)
	{
		const char *record = records + i * width;
		uint64		field = narrow ? Word32(record, offset) : Word(record, offset);

		if (field != expect[i].field || PlaceOf(record, width) != expect[i].place)
			abort();
	}
}

/* Every record once, one run per field (all 8 bytes, or the first 4), each run in input order. */
static void
CheckGrouped(const char *grouped, size_t n, size_t width, size_t offset, bool narrow)
{
	bool	   *seen = palloc0(Max(n, 1));

	for (size_t i = 0; i < n; i++)
	{
		const char *record = grouped + i * width;
		const char *before = grouped + (i > 0 ? i - 1 : 0) * width;
		uint64		place = PlaceOf(record, width);
		uint64		field = narrow ? Word32(record, offset) : Word(record, offset);

		if (place >= n || seen[place])
			abort();
		seen[place] = true;
		if (i > 0 && (narrow ? Word32(before, offset) : Word(before, offset)) == field &&
			PlaceOf(before, width) > place)
			abort();
		/* a field seen before must be the one just before: its run goes on */
		for (size_t j = 0; j + 1 < i; j++)
		{
			const char *other = grouped + j * width;

			if ((narrow ? Word32(other, offset) : Word(other, offset)) == field &&
				(narrow ? Word32(before, offset) : Word(before, offset)) != field)
				abort();
		}
	}
	pfree(seen);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t widths[] = {12, 16, 24, 48};
	size_t		width;
	size_t		offset;
	int			bits;
	int			group_bits;
	bool		high;
	size_t		n;
	char	   *records;
	char	   *grouped;
	char	   *grouped32;
	char	   *narrow;
	char	   *scratch;
	Keyed	   *expect;

	if (size < 2)
		return 0;
	width = widths[data[0] & 3];
	offset = (width > 16 && (data[0] & 4)) ? 8 : 0;
	group_bits = 11 * ((data[0] >> 3) & 3);
	bits = 1 + (data[1] & 63);
	high = (data[1] & 64) != 0;
	data += 2;
	size -= 2;
	n = size / 8;
	records = palloc(Max(n, 1) * width);
	grouped = palloc(Max(n, 1) * width);
	grouped32 = palloc(Max(n, 1) * width);
	narrow = palloc(Max(n, 1) * width);
	scratch = palloc(Max(n, 1) * width);
	expect = palloc(Max(n, 1) * sizeof(Keyed));

	/* 1. records from the input: a field of the chosen bits, a place */
	for (size_t i = 0; i < n; i++)
	{
		char	   *record = records + i * width;
		uint64		v;
		uint64		place = i;

		memcpy(&v, data + 8 * i, 8);
		v = bits == 64 ? v : (high ? v << (64 - bits) : v & ((UINT64CONST(1) << bits) - 1));
		memset(record, 0xA5, width);
		memcpy(record + offset, &v, 8);
		if (width == 12)
		{
			uint32		p4 = (uint32) i;

			memcpy(record + 8, &p4, 4);
		}
		else
			memcpy(record + width - 8, &place, 8);
		expect[i].field = v;
		expect[i].place = i;
	}
	memcpy(grouped, records, n * width);
	memcpy(narrow, records, n * width);
	qsort(expect, n, sizeof(Keyed), CompareKeyed);

	/* 2. the sort: the stable order */
	RadixSortRecords(records, scratch, n, width, offset);
	CheckOrder(records, n, width, offset, false, expect);

	/* 3. the grouping: every record once, one run per field, in input order */
	memcpy(grouped32, grouped, n * width);
	if (group_bits == 0)
		RadixGroupRecords(grouped, scratch, n, width, offset);
	else
		RadixGroupRecordsByBits(grouped, scratch, n, width, offset, group_bits);
	CheckGrouped(grouped, n, width, offset, false);

	/* 3b. the same by the field's first four bytes as a uint32 */
	if (group_bits == 0)
		RadixGroupRecords32(grouped32, scratch, n, width, offset);
	else
		RadixGroupRecords32ByBits(grouped32, scratch, n, width, offset, group_bits);
	CheckGrouped(grouped32, n, width, offset, true);

	/* 4. the sort by a uint32: the stable order of the field's first four bytes */
	for (size_t i = 0; i < n; i++)
	{
		expect[i].field = Word32(narrow + i * width, offset);
		expect[i].place = i;
	}
	qsort(expect, n, sizeof(Keyed), CompareKeyed);
	RadixSortRecords32(narrow, scratch, n, width, offset);
	CheckOrder(narrow, n, width, offset, true, expect);
	pfree(narrow);
	pfree(records);
	pfree(grouped);
	pfree(grouped32);
	pfree(scratch);
	pfree(expect);
	return 0;
}
