/*
 * key_filter.c
 *		Which bucket keys occur more than once, and how often: the first pass
 *		of all-pairs discovery, in memory bounded by work_mem.
 *
 * All-pairs discovery groups rows by bucket key (LSH band keys of minhash
 * sketches, block keys of simhash fingerprints).  Two things made that slow
 * on real text:
 *
 * Almost every key occurs once, and grouping tens of millions of them is
 * most of the work.  So a first pass, the aggregate ndd_colliding_keys(keys),
 * sets two bitmaps: a key's bit in "seen", and in "again" when it was seen
 * already.  The second pass (ndd_colliding) keeps only keys whose bit is in
 * "again": every key that occurs twice is kept, and a key that occurs once
 * only when another key shares its bit, a small fraction when the bitmaps
 * have several bits per key.
 *
 * A few keys occur in thousands of rows (a band that falls in a licence or
 * a footer many documents share), and a bucket of m rows means m^2 / 2
 * pairs.  The pass also counts keys (approximately, in a smaller table of
 * saturating counters), and ndd_colliding can leave out each row's most
 * frequent keys, as prefix filtering does (Chaudhuri, Ganti and Kaushik,
 * 2006; Bayardo, Ma and Srikant, 2007).  Order all keys by (count, key).  If
 * two rows of n keys each share at least a keys, the first s of the shared
 * keys in that order each have at least a - s shared keys after them, so
 * each lies among the first n - a + s keys of both rows: rows that keep
 * those and drop their a - s most frequent keys still share s keys.  The
 * counts only need to be the same for every row, not right, so the answer
 * stays exact; the filter only removes work.
 *
 * The bitmaps and counters take at most work_mem, and are sized for the
 * expected number of keys when the caller knows it, so a small table does
 * not allocate (and zero) all of work_mem.
 *
 * Across shards
 * -------------
 * A key seen once on each of two shards collides, which no shard's own
 * filter can tell.  So each shard returns its whole state, both bitmaps and
 * the counters (ndd_colliding_keys_partial, an aggregate postgres_fdw runs
 * on the shard), and the coordinator merges the states into the filter
 * (ndd_colliding_keys_merge), as parallel workers' states are combined.
 * The states must have one size: the coordinator chooses it
 * (ndd_key_filter_bits) and passes it to every shard.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "keys/key_filter.h"

/* bits per expected key: about 1 single key in 10 survives the filter */
#define KEY_FILTER_BITS_PER_KEY		10
#define KEY_FILTER_MIN_BITS			((uint64) 1 << 16)
/* the serialized state (two bitmaps and the counters) must fit a varlena */
#define KEY_FILTER_MAX_BITS			((uint64) 1 << 31)
/* one counter per this many bits of a bitmap */
#define KEY_FILTER_BITS_PER_COUNTER	8
/* bytes of work_mem per bitmap bit: two bitmaps and 1/8 byte of counters */
#define KEY_FILTER_BYTES_PER_BIT	(2.0 / 8 + 1.0 / KEY_FILTER_BITS_PER_COUNTER)

/* the sizes, shared by the state and the result */
typedef struct KeyFilterSize
{
	uint64		nbits;			/* bits per bitmap, a multiple of 64 */
	uint64		ncounters;
} KeyFilterSize;

/* The aggregate's state, and the engine's filter (key_filter.h). */
struct KeyFilterState
{
	KeyFilterSize size;
	uint8	   *seen;
	uint8	   *again;
	uint8	   *counts;			/* saturating at 255 */
};

/* The result: the "again" bitmap, then the counters. */
typedef struct KeyFilter
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int32		padding;
	KeyFilterSize size;
	uint8		data[FLEXIBLE_ARRAY_MEMBER];
} KeyFilter;

/* Bytes of one bitmap. */
static inline Size
BitmapBytes(const KeyFilterSize *size)
{
	return size->nbits / 8;
}

/*
 * Sizes that FilterSize can produce: anything else did not come from
 * ndd_colliding_keys, and would index outside the bitmaps or counters.
 */
static inline bool
FilterSizeIsValid(const KeyFilterSize *size)
{
	return size->nbits >= KEY_FILTER_MIN_BITS && size->nbits <= KEY_FILTER_MAX_BITS &&
		size->nbits % 64 == 0 &&
		size->ncounters == size->nbits / KEY_FILTER_BITS_PER_COUNTER;
}

/* A hash of the key in [0, n): keys may be structured (simhash blocks). */
static inline uint64
Slot(uint64 key, uint64 seed, uint64 n)
{
	uint64		h = NddHashMix(key ^ seed);

	/* n <= 2^32: the high half of h, scaled */
	return ((h >> 32) * n) >> 32;
}

#define BIT_SEED		UINT64CONST(0)
#define COUNTER_SEED	UINT64CONST(0x9E3779B97F4A7C15)

/*
 * The sizes: enough bits for the expected keys (unknown when zero or less),
 * everything within work_mem.
 */
static KeyFilterSize
FilterSize(int64 expected_keys)
{
	KeyFilterSize size;
	double		budget = (double) work_mem * 1024.0 / KEY_FILTER_BYTES_PER_BIT;
	double		want = expected_keys > 0 ? (double) expected_keys * KEY_FILTER_BITS_PER_KEY : budget;
	double		bits = Min(Min(want, budget), (double) KEY_FILTER_MAX_BITS);

	size.nbits = Max((uint64) bits / 64 * 64, KEY_FILTER_MIN_BITS);
	size.ncounters = size.nbits / KEY_FILTER_BITS_PER_COUNTER;
	return size;
}

/* A zeroed state of the given sizes, allocated in context. */
static KeyFilterState *
NewState(MemoryContext context, KeyFilterSize size)
{
	KeyFilterState *state = MemoryContextAlloc(context, sizeof(KeyFilterState));

	state->size = size;
	state->seen = MemoryContextAllocHuge(context, BitmapBytes(&size));
	state->again = MemoryContextAllocHuge(context, BitmapBytes(&size));
	state->counts = MemoryContextAllocHuge(context, size.ncounters);
	memset(state->seen, 0, BitmapBytes(&size));
	memset(state->again, 0, BitmapBytes(&size));
	memset(state->counts, 0, size.ncounters);
	return state;
}

/* Record one key: its bit in seen (or again, if set), its counter. */
static inline void
AddKey(KeyFilterState *state, uint64 key)
{
	uint64		bit = Slot(key, BIT_SEED, state->size.nbits);
	uint8		m = (uint8) (1 << (bit & 7));
	uint64		c = Slot(key, COUNTER_SEED, state->size.ncounters);

	if (state->seen[bit >> 3] & m)
		state->again[bit >> 3] |= m;
	else
		state->seen[bit >> 3] |= m;
	if (state->counts[c] < 255)
		state->counts[c]++;
}

/* The elements of a one-dimensional bigint[] without nulls. */
static int64 *
KeysOf(ArrayType *keys, int *n)
{
	if (ARR_NDIM(keys) > 1 || ARR_ELEMTYPE(keys) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be a one-dimensional bigint array")));
	NddCheckNoNulls(keys, "keys");
	*n = ArrayGetNItems(ARR_NDIM(keys), ARR_DIMS(keys));
	return (int64 *) ARR_DATA_PTR(keys);
}

/* Add b's keys to a (same sizes): seen in both is seen again; counts add up. */
static void
MergeInto(KeyFilterState *a, const KeyFilterState *b)
{
	Size		n = BitmapBytes(&a->size);

	for (Size i = 0; i < n; i++)
	{
		a->again[i] |= b->again[i] | (a->seen[i] & b->seen[i]);
		a->seen[i] |= b->seen[i];
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	for (Size i = 0; i < a->size.ncounters; i++)
		a->counts[i] = (uint8) Min(255, (int) a->counts[i] + b->counts[i]);
}

/* ndd_colliding_keys(keys bigint[], expected_keys bigint) transition */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_transfn);
Datum
ndd_colliding_keys_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	KeyFilterState *state;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_colliding_keys_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
		state = NewState(aggcontext, FilterSize(PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2)));
	else
		state = (KeyFilterState *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1))
	{
		int			n;
		int64	   *keys = KeysOf(PG_GETARG_ARRAYTYPE_P(1), &n);

		for (int i = 0; i < n; i++)
			AddKey(state, (uint64) keys[i]);
	}
	PG_RETURN_POINTER(state);
}

/* Parallel workers' states: seen in both is seen again; counts add up. */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_combinefn);
Datum
ndd_colliding_keys_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	KeyFilterState *a;
	KeyFilterState *b;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_colliding_keys_combinefn called in non-aggregate context");
	a = PG_ARGISNULL(0) ? NULL : (KeyFilterState *) PG_GETARG_POINTER(0);
	b = PG_ARGISNULL(1) ? NULL : (KeyFilterState *) PG_GETARG_POINTER(1);
	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
	{
		a = NewState(aggcontext, b->size);
		memcpy(a->seen, b->seen, BitmapBytes(&b->size));
		memcpy(a->again, b->again, BitmapBytes(&b->size));
		memcpy(a->counts, b->counts, b->size.ncounters);
		PG_RETURN_POINTER(a);
	}
	if (a->size.nbits != b->size.nbits || a->size.ncounters != b->size.ncounters)
		elog(ERROR, "cannot combine key filters of different sizes");
	MergeInto(a, b);
	PG_RETURN_POINTER(a);
}

/* The state as bytea, for parallel aggregation: sizes, seen, again, counts. */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_serialfn);
Datum
ndd_colliding_keys_serialfn(PG_FUNCTION_ARGS)
{
	KeyFilterState *state = (KeyFilterState *) PG_GETARG_POINTER(0);
	Size		n = BitmapBytes(&state->size);
	Size		len = VARHDRSZ + sizeof(KeyFilterSize) + 2 * n + state->size.ncounters;
	bytea	   *out = palloc_extended(len, MCXT_ALLOC_HUGE);
	char	   *p = VARDATA(out);

	SET_VARSIZE(out, len);
	memcpy(p, &state->size, sizeof(KeyFilterSize));
	p += sizeof(KeyFilterSize);
	memcpy(p, state->seen, n);
	memcpy(p + n, state->again, n);
	memcpy(p + 2 * n, state->counts, state->size.ncounters);
	PG_RETURN_BYTEA_P(out);
}

/* The state back from ndd_colliding_keys_serialfn, checked for size. */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_deserialfn);
Datum
ndd_colliding_keys_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	const char *p = VARDATA_ANY(in);
	KeyFilterSize size;
	KeyFilterState *state;
	Size		n;

	/* it may also come from a shard, through ndd_colliding_keys_merge */
	if (VARSIZE_ANY_EXHDR(in) >= sizeof(KeyFilterSize))
		memcpy(&size, p, sizeof(KeyFilterSize));
	if (VARSIZE_ANY_EXHDR(in) < sizeof(KeyFilterSize) || !FilterSizeIsValid(&size) ||
		VARSIZE_ANY_EXHDR(in) != sizeof(KeyFilterSize) + 2 * BitmapBytes(&size) + size.ncounters)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid key filter state"),
				 errhint("Pass a value made by ndd_colliding_keys_partial().")));
	p += sizeof(KeyFilterSize);
	state = NewState(CurrentMemoryContext, size);
	n = BitmapBytes(&size);
	memcpy(state->seen, p, n);
	memcpy(state->again, p + n, n);
	memcpy(state->counts, p + 2 * n, size.ncounters);
	PG_RETURN_POINTER(state);
}

/* The final value: the "again" bitmap and the counters, as bytea. */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_finalfn);
Datum
ndd_colliding_keys_finalfn(PG_FUNCTION_ARGS)
{
	KeyFilterState *state;
	Size		n;
	Size		len;
	KeyFilter  *filter;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (KeyFilterState *) PG_GETARG_POINTER(0);
	n = BitmapBytes(&state->size);
	len = offsetof(KeyFilter, data) + n + state->size.ncounters;
	filter = palloc_extended(len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(filter, len);
	filter->padding = 0;
	filter->size = state->size;
	memcpy(filter->data, state->again, n);
	memcpy(filter->data + n, state->counts, state->size.ncounters);
	PG_RETURN_POINTER(filter);
}

/* A key with its count, for choosing the most frequent keys of a row. */
typedef struct CountedKey
{
	uint64		key;
	uint32		count;			/* the filter's saturate at 255 */
	bool		drop;
} CountedKey;

/* Descending (count, key): the global order, most frequent first. */
static int
CompareFrequentFirst(const void *a, const void *b)
{
	const CountedKey *x = *(const CountedKey *const *) a;
	const CountedKey *y = *(const CountedKey *const *) b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return (x->key < y->key) - (x->key > y->key);
}

/* Ask the cache for a byte that will be read soon (keys hit random lines). */
#ifdef __GNUC__
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void) 0)
#endif

/* (count, key) of x is above y's in the global order, most frequent first */
static inline bool
MoreFrequent(const CountedKey *x, const CountedKey *y)
{
	return x->count != y->count ? x->count > y->count : x->key > y->key;
}

/*
 * Mark the drop most frequent of counted[0 .. n) by the global order, as
 * sorting them by CompareFrequentFirst and taking the first would: a few
 * of a few dozen, so a small insertion list rather than a sort.
 */
static void
MarkMostFrequent(CountedKey *counted, int n, int drop)
{
	CountedKey *top[64];
	int			ntop = 0;

	if (drop >= n)
	{
		for (int i = 0; i < n; i++)
			counted[i].drop = true;
		return;
	}
	if (drop > lengthof(top))
	{
		CountedKey **order = palloc(n * sizeof(CountedKey *));

		for (int i = 0; i < n; i++)
			order[i] = &counted[i];
		qsort(order, n, sizeof(CountedKey *), CompareFrequentFirst);
		for (int i = 0; i < drop; i++)
			order[i]->drop = true;
		pfree(order);
		return;
	}
	for (int i = 0; i < n; i++)
	{
		int			at = ntop;

		if (ntop == drop && !MoreFrequent(&counted[i], top[ntop - 1]))
			continue;
		while (at > 0 && MoreFrequent(&counted[i], top[at - 1]))
			at--;
		if (ntop < drop)
			ntop++;
		memmove(&top[at + 1], &top[at], (ntop - 1 - at) * sizeof(CountedKey *));
		top[at] = &counted[i];
	}
	for (int i = 0; i < ntop; i++)
		top[i]->drop = true;
}

/*
 * The keys among keys[0 .. n) that may occur more than once in the set the
 * filter saw (every key that does is among them), leaving out the row's
 * drop most frequent keys, in the row's order: the number kept into kept.
 */
static int
Colliding(const uint8 *again, const uint8 *counts, const KeyFilterSize *size,
		  const uint64 *keys, int n, int drop, uint64 *kept)
{
	CountedKey	local[64];
	uint64		local_bits[64];
	CountedKey *counted = n <= lengthof(local) ? local : palloc(n * sizeof(CountedKey));
	uint64	   *bits = n <= lengthof(local) ? local_bits : palloc(n * sizeof(uint64));
	int			nkept = 0;

	/* every line the row needs is asked for before the first is read */
	for (int i = 0; i < n; i++)
	{
		counted[i].key = keys[i];
		bits[i] = Slot(keys[i], BIT_SEED, size->nbits);
		counted[i].count = 0;
		PREFETCH(&again[bits[i] >> 3]);
		if (drop > 0)
		{
			uint64		c = Slot(keys[i], COUNTER_SEED, size->ncounters);

			PREFETCH(&counts[c]);
			/* the slot for now; the count is read below */
			bits[i] |= c << 32;
		}
	}
	for (int i = 0; i < n; i++)
	{
		counted[i].drop = false;
		if (drop > 0)
			counted[i].count = counts[bits[i] >> 32];
		bits[i] &= PG_UINT32_MAX;
	}
	if (drop > 0)
		MarkMostFrequent(counted, n, drop);
	for (int i = 0; i < n; i++)
	{
		if (!counted[i].drop && ((again[bits[i] >> 3] >> (bits[i] & 7)) & 1))
			kept[nkept++] = counted[i].key;
	}
	if (counted != local)
	{
		pfree(counted);
		pfree(bits);
	}
	return nkept;
}

/*
 * ndd_colliding(keys, filter, drop_frequent): the keys that may occur more
 * than once in the set the filter saw (every key that does is among them),
 * leaving out the row's drop_frequent most frequent keys.
 */
PG_FUNCTION_INFO_V1(ndd_colliding);
Datum
ndd_colliding(PG_FUNCTION_ARGS)
{
	int			n;
	int64	   *keys = KeysOf(PG_GETARG_ARRAYTYPE_P(0), &n);
	bytea	   *filter = PG_GETARG_BYTEA_P(1);
	int32		drop = PG_GETARG_INT32(2);
	KeyFilterSize size;
	const uint8 *again;
	uint64	   *kept;
	int			nkept;
	Datum	   *values;

	/*
	 * A bytea is only 4-byte aligned where it sits in a tuple: copy the
	 * sizes out instead of reading them through a KeyFilter pointer.
	 */
	if (VARSIZE(filter) >= offsetof(KeyFilter, data))
		memcpy(&size, (char *) filter + offsetof(KeyFilter, size), sizeof(size));
	if (VARSIZE(filter) < offsetof(KeyFilter, data) ||
		!FilterSizeIsValid(&size) ||
		VARSIZE(filter) != offsetof(KeyFilter, data) + BitmapBytes(&size) + size.ncounters)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid key filter"),
				 errhint("Pass a value made by ndd_colliding_keys().")));
	if (drop < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("drop_frequent must not be negative")));
	again = (const uint8 *) filter + offsetof(KeyFilter, data);
	kept = palloc(Max(n, 1) * sizeof(uint64));
	nkept = Colliding(again, again + BitmapBytes(&size), &size, (const uint64 *) keys, n, drop, kept);
	values = palloc(Max(nkept, 1) * sizeof(Datum));
	for (int i = 0; i < nkept; i++)
		values[i] = Int64GetDatum((int64) kept[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(values, nkept, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE));
}


/* ---------------------------------------------------------------------
 * The same filter from C, for the discovery engine (key_filter.h)
 * ---------------------------------------------------------------------
 */

KeyFilterState *
KeyFilterCreate(int64 expected_keys)
{
	return NewState(CurrentMemoryContext, FilterSize(expected_keys));
}

double
KeyFilterBitsPerKey(int64 expected_keys)
{
	return expected_keys > 0 ? (double) FilterSize(expected_keys).nbits / (double) expected_keys : 0.0;
}

/* Every line a row's keys need, asked for before the first is written. */
static inline void
PrefetchKeys(const KeyFilterState *filter, const uint64 *keys, int n)
{
	for (int i = 0; i < n; i++)
	{
		uint64		bit = Slot(keys[i], BIT_SEED, filter->size.nbits);

		PREFETCH(&filter->seen[bit >> 3]);
		PREFETCH(&filter->again[bit >> 3]);
		PREFETCH(&filter->counts[Slot(keys[i], COUNTER_SEED, filter->size.ncounters)]);
	}
}

void
KeyFilterAddKeys(KeyFilterState *filter, const uint64 *keys, int n)
{
	PrefetchKeys(filter, keys, n);
	for (int i = 0; i < n; i++)
		AddKey(filter, keys[i]);
}

Size
KeyFilterBytes(const KeyFilterState *filter)
{
	return offsetof(KeyFilter, data) - VARHDRSZ + BitmapBytes(&filter->size) + filter->size.ncounters;
}

int
KeyFilterColliding(const KeyFilterState *filter, const uint64 *keys, int n, int drop, uint64 *kept)
{
	return Colliding(filter->again, filter->counts, &filter->size, keys, n, drop, kept);
}

/*
 * The same filter in shared memory, for a parallel pass.  Each participant
 * fills a filter of its own and adds it here once, word by word with
 * atomic operations: an atomic operation per key made the parallel pass
 * twice the CPU of the serial one, every key's line waited on in turn.
 * Whatever the order the participants add in, the filter ends as the
 * serial pass leaves it.
 */
Size
KeyFilterSharedSize(int64 expected_keys)
{
	KeyFilterSize size = FilterSize(expected_keys);

	return 2 * BitmapBytes(&size) + size.ncounters;
}

KeyFilterState *
KeyFilterInShared(void *place, int64 expected_keys, bool initialize)
{
	uint8	   *data = place;
	KeyFilterSize size = FilterSize(expected_keys);

	/* each process's own pointers: the segment maps at its own address */
	KeyFilterState *filter = palloc(sizeof(KeyFilterState));

	filter->size = size;
	filter->seen = data;
	filter->again = data + BitmapBytes(&size);
	filter->counts = data + 2 * BitmapBytes(&size);
	if (initialize)
		memset(data, 0, 2 * BitmapBytes(&size) + size.ncounters);
	return filter;
}

/* Four saturating counters added to four, byte by byte. */
static inline uint32
AddCounters(uint32 a, uint32 b)
{
	uint8	   *x = (uint8 *) &a;
	const uint8 *y = (const uint8 *) &b;

	for (int i = 0; i < 4; i++)
		x[i] = (uint8) Min(255, (int) x[i] + y[i]);
	return a;
}

void
KeyFilterAddToShared(KeyFilterState *shared, const KeyFilterState *own)
{
	const uint32 *seen = (const uint32 *) own->seen;
	const uint32 *again = (const uint32 *) own->again;
	const uint32 *counts = (const uint32 *) own->counts;
	pg_atomic_uint32 *shared_seen = (pg_atomic_uint32 *) shared->seen;
	pg_atomic_uint32 *shared_again = (pg_atomic_uint32 *) shared->again;
	pg_atomic_uint32 *shared_counts = (pg_atomic_uint32 *) shared->counts;

	if (own->size.nbits != shared->size.nbits || own->size.ncounters != shared->size.ncounters)
		elog(ERROR, "ndd: a participant's key filter differs in size from the shared one");
	for (Size i = 0; i < BitmapBytes(&own->size) / sizeof(uint32); i++)
	{
		uint32		more;

		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		/* "again" bits are "seen" bits too: an empty word adds nothing */
		if (seen[i] == 0)
			continue;
		/* seen here and already there, or twice here: seen again */
		more = again[i] | (pg_atomic_fetch_or_u32(&shared_seen[i], seen[i]) & seen[i]);
		if ((pg_atomic_read_u32(&shared_again[i]) & more) != more)
			(void) pg_atomic_fetch_or_u32(&shared_again[i], more);
	}
	for (Size i = 0; i < own->size.ncounters / sizeof(uint32); i++)
	{
		uint32		old;

		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (counts[i] == 0)
			continue;
		old = pg_atomic_read_u32(&shared_counts[i]);
		while (!pg_atomic_compare_exchange_u32(&shared_counts[i], &old, AddCounters(old, counts[i])))
			;
	}
}

void
KeyFilterFree(KeyFilterState *filter)
{
	pfree(filter->seen);
	pfree(filter->again);
	pfree(filter->counts);
	pfree(filter);
}

/*
 * Of keys[0 .. n), counted exactly (counts[i] rows hold keys[i]), all but
 * the drop most frequent by the same global order, in the row's order,
 * into kept (room for n): how many.  The discovery engine counts its keys
 * by sorting them, and the rule above stays exact with any counts that are
 * the same for every row.
 */
int
KeysLessMostFrequent(const uint64 *keys, const uint32 *counts, int n, int drop, uint64 *kept)
{
	CountedKey	local[64];
	CountedKey *counted = n <= lengthof(local) ? local : palloc(n * sizeof(CountedKey));
	int			nkept = 0;

	for (int i = 0; i < n; i++)
	{
		counted[i].key = keys[i];
		counted[i].count = counts[i];
		counted[i].drop = false;
	}
	if (drop > 0)
		MarkMostFrequent(counted, n, drop);
	for (int i = 0; i < n; i++)
	{
		if (!counted[i].drop)
			kept[nkept++] = counted[i].key;
	}
	if (counted != local)
		pfree(counted);
	return nkept;
}

/*
 * ndd_key_filter_bits(expected_keys): the bits per bitmap ndd_colliding_keys
 * would use for that many keys under this session's work_mem, for
 * ndd_colliding_keys_partial on every shard.
 */
PG_FUNCTION_INFO_V1(ndd_key_filter_bits);
Datum
ndd_key_filter_bits(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) FilterSize(PG_GETARG_INT64(0)).nbits);
}

/* ndd_colliding_keys_partial(keys bigint[], filter_bits bigint) transition */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_partial_transfn);
Datum
ndd_colliding_keys_partial_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	KeyFilterState *state;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_colliding_keys_partial_transfn called in non-aggregate context");
	if (PG_ARGISNULL(0))
	{
		KeyFilterSize size;

		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("filter_bits must not be null")));
		size.nbits = (uint64) PG_GETARG_INT64(2);
		size.ncounters = size.nbits / KEY_FILTER_BITS_PER_COUNTER;
		if (PG_GETARG_INT64(2) <= 0 || !FilterSizeIsValid(&size))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("filter_bits " INT64_FORMAT " is not a key filter size", PG_GETARG_INT64(2)),
					 errhint("Pass a value of ndd_key_filter_bits().")));
		state = NewState(aggcontext, size);
	}
	else
		state = (KeyFilterState *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1))
	{
		int			n;
		int64	   *keys = KeysOf(PG_GETARG_ARRAYTYPE_P(1), &n);

		for (int i = 0; i < n; i++)
			AddKey(state, (uint64) keys[i]);
	}
	PG_RETURN_POINTER(state);
}

/* ndd_colliding_keys_merge(partial bytea) transition: combine one more state */
PG_FUNCTION_INFO_V1(ndd_colliding_keys_merge_transfn);
Datum
ndd_colliding_keys_merge_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	MemoryContext old;
	KeyFilterState *state = PG_ARGISNULL(0) ? NULL : (KeyFilterState *) PG_GETARG_POINTER(0);
	KeyFilterState *more;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_colliding_keys_merge_transfn called in non-aggregate context");
	if (PG_ARGISNULL(1))
	{
		if (state == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(state);
	}
	/* a state from a shard is checked as a parallel worker's would be */
	old = MemoryContextSwitchTo(state == NULL ? aggcontext : CurrentMemoryContext);
	more = (KeyFilterState *) DatumGetPointer(DirectFunctionCall2(ndd_colliding_keys_deserialfn,
																  PG_GETARG_DATUM(1),
																  PointerGetDatum(NULL)));
	MemoryContextSwitchTo(old);
	if (state == NULL)
		PG_RETURN_POINTER(more);
	if (state->size.nbits != more->size.nbits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot merge key filters of different sizes"),
				 errdetail("One has " UINT64_FORMAT " bits per bitmap, another " UINT64_FORMAT ".",
						   state->size.nbits, more->size.nbits),
				 errhint("Make every partial filter with the same filter_bits.")));
	MergeInto(state, more);
	pfree(more->seen);
	pfree(more->again);
	pfree(more->counts);
	pfree(more);
	PG_RETURN_POINTER(state);
}
