/*
 * radix_sort.c
 *		Least significant digit radix sort of fixed-width records by a
 *		uint64 field; see radix_sort.h.
 *
 * One pass counts every digit (11 bits) of every field; then each digit
 * that differs between records moves the records once, stably, between
 * the array and the scratch space.  A digit every record shares (the high
 * bits of heap positions in one range) costs nothing.  PostgreSQL's sort
 * template compares and swaps; this moves each record at most six times,
 * in order, whatever the data.  Grouping needs less: sorted by the low
 * bits of each field's hash (one digit up to 2048 records, two up to 4M,
 * else three; a hash, since keys may be structured), equal fields are
 * together, and the rare other fields whose hashes agree there are put in
 * order within their short runs.  A uint32 field that is itself a hash
 * (the discovery engine's key tags) is grouped by its own low bits.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hash.h"
#include "base/radix_sort.h"

#define DIGIT_BITS		11
#define DIGIT_VALUES	(1 << DIGIT_BITS)
#define MAX_DIGITS		((64 + DIGIT_BITS - 1) / DIGIT_BITS)
/* grouping sorts by at most this many low bits of each field's hash */
#define GROUP_BITS		(3 * DIGIT_BITS)

/* records between checks for cancel */
#define RECORDS_PER_CHECK	(1 << 20)

/* what a record is sorted on */
typedef enum SortOn
{
	SORT_ON_FIELD,				/* its uint64 field */
	SORT_ON_FIELD32,			/* its uint32 field */
	SORT_ON_HASH				/* its uint64 field's hash: to group */
} SortOn;

static inline uint64
FieldOf(const char *record, size_t key_offset)
{
	uint64		v;

	memcpy(&v, record + key_offset, sizeof(uint64));
	return v;
}

/* The value sorted on: the field, or for grouping its hash (keys may be structured). */
static inline uint64
SortValueOf(const char *record, size_t key_offset, SortOn on)
{
	uint32		v32;

	if (on == SORT_ON_FIELD32)
	{
		memcpy(&v32, record + key_offset, sizeof(uint32));
		return v32;
	}
	return on == SORT_ON_HASH ? NddHashMix(FieldOf(record, key_offset)) : FieldOf(record, key_offset);
}

static inline int
DigitOf(uint64 v, int d)
{
	return (int) ((v >> (d * DIGIT_BITS)) & (DIGIT_VALUES - 1));
}

/*
 * Move src's records to dst, stably, by digit d of their fields; offsets
 * are where each digit value's records begin.  Inline, so that a constant
 * width makes each copy a few moves.
 */
static inline void
Scatter(const char *src, char *dst, size_t n, size_t width, size_t key_offset, SortOn on,
		int d, size_t *offsets)
{
	for (size_t i = 0; i < n; i++)
	{
		const char *record = src + i * width;

		memcpy(dst + offsets[DigitOf(SortValueOf(record, key_offset, on), d)]++ * width,
			   record, width);
		if ((i & (RECORDS_PER_CHECK - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/* Sort by the low digits of the value sorted on: enough for bits bits. */
static void
SortLowBits(char *records, char *scratch, size_t n, size_t width, size_t key_offset, SortOn on,
			int bits)
{
	int			digits = Min((bits + DIGIT_BITS - 1) / DIGIT_BITS, MAX_DIGITS);
	size_t	   *counts = palloc0(MAX_DIGITS * DIGIT_VALUES * sizeof(size_t));
	size_t	   *offsets = palloc(DIGIT_VALUES * sizeof(size_t));
	char	   *src = records;
	char	   *dst = scratch;

	/* 1. every digit of every field counted, in one pass */
	for (size_t i = 0; i < n; i++)
	{
		uint64		v = SortValueOf(records + i * width, key_offset, on);

		for (int d = 0; d < digits; d++)
			counts[d * DIGIT_VALUES + DigitOf(v, d)]++;
		if ((i & (RECORDS_PER_CHECK - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	/* 2. each digit that differs, from the lowest: the records moved by it */
	for (int d = 0; d < digits && n > 0; d++)
	{
		size_t	   *count = &counts[d * DIGIT_VALUES];
		size_t		sum = 0;
		char	   *swap;

		/* the array always holds every record, so its first one will do */
		if (count[DigitOf(SortValueOf(records, key_offset, on), d)] == n)
			continue;
		for (int b = 0; b < DIGIT_VALUES; b++)
		{
			offsets[b] = sum;
			sum += count[b];
		}
		if (width == 8)
			Scatter(src, dst, n, 8, key_offset, on, d, offsets);
		else if (width == 12)
			Scatter(src, dst, n, 12, key_offset, on, d, offsets);
		else if (width == 16)
			Scatter(src, dst, n, 16, key_offset, on, d, offsets);
		else if (width == 24)
			Scatter(src, dst, n, 24, key_offset, on, d, offsets);
		else
			Scatter(src, dst, n, width, key_offset, on, d, offsets);
		swap = src;
		src = dst;
		dst = swap;
	}

	/* 3. the sorted records where the caller gave them */
	if (src != records)
		memcpy(records, src, n * width);
	pfree(offsets);
	pfree(counts);
}

void
RadixSortRecords(char *records, char *scratch, size_t n, size_t width, size_t key_offset)
{
	SortLowBits(records, scratch, n, width, key_offset, SORT_ON_FIELD, 64);
}

void
RadixSortRecords32(char *records, char *scratch, size_t n, size_t width, size_t key_offset)
{
	SortLowBits(records, scratch, n, width, key_offset, SORT_ON_FIELD32, 32);
}

/* The whole field a record is grouped by: its uint32, or the uint64 whose hash was sorted on. */
static inline uint64
WholeFieldOf(const char *record, size_t key_offset, SortOn on)
{
	return on == SORT_ON_FIELD32 ? SortValueOf(record, key_offset, on) : FieldOf(record, key_offset);
}

/* Records [start, end), whose sorted-on values agree in their low bits, stably by the whole field. */
static void
OrderRun(char *records, char *hold, size_t start, size_t end, size_t width, size_t key_offset,
		 SortOn on)
{
	for (size_t i = start + 1; i < end; i++)
	{
		uint64		v = WholeFieldOf(records + i * width, key_offset, on);
		size_t		j = i;

		if (WholeFieldOf(records + (i - 1) * width, key_offset, on) <= v)
			continue;
		memcpy(hold, records + i * width, width);
		while (j > start && WholeFieldOf(records + (j - 1) * width, key_offset, on) > v)
		{
			memcpy(records + j * width, records + (j - 1) * width, width);
			j--;
		}
		memcpy(records + j * width, hold, width);
	}
}

/*
 * Digits of the hash enough that a bucket holds about one field: sorting
 * fewer digits moves every record fewer times, and the rare fields that
 * share a bucket are put in order within it.
 */
static int
GroupBits(size_t n)
{
	int			bits = DIGIT_BITS;

	while (bits < GROUP_BITS && (UINT64CONST(1) << bits) < n)
		bits += DIGIT_BITS;
	return bits;
}

/* Sorted by the low bits of the value sorted on, then each run of equal bits by the whole field. */
static void
GroupByBits(char *records, char *scratch, size_t n, size_t width, size_t key_offset, SortOn on,
			int bits)
{
	size_t		start = 0;
	uint64		mask = (UINT64CONST(1) << bits) - 1;

	SortLowBits(records, scratch, n, width, key_offset, on, bits);
	for (size_t i = 1; i <= n; i++)
	{
		if (i < n && (SortValueOf(records + i * width, key_offset, on) & mask) ==
			(SortValueOf(records + start * width, key_offset, on) & mask))
			continue;
		if (i - start > 1)
			OrderRun(records, scratch, start, i, width, key_offset, on);
		start = i;
	}
}

void
RadixGroupRecordsByBits(char *records, char *scratch, size_t n, size_t width, size_t key_offset,
						int bits)
{
	GroupByBits(records, scratch, n, width, key_offset, SORT_ON_HASH, bits);
}

void
RadixGroupRecords(char *records, char *scratch, size_t n, size_t width, size_t key_offset)
{
	GroupByBits(records, scratch, n, width, key_offset, SORT_ON_HASH, GroupBits(n));
}

void
RadixGroupRecords32ByBits(char *records, char *scratch, size_t n, size_t width, size_t key_offset,
						  int bits)
{
	GroupByBits(records, scratch, n, width, key_offset, SORT_ON_FIELD32, bits);
}

void
RadixGroupRecords32(char *records, char *scratch, size_t n, size_t width, size_t key_offset)
{
	GroupByBits(records, scratch, n, width, key_offset, SORT_ON_FIELD32, GroupBits(n));
}
