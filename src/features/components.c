/*
 * components.c
 *		ndd_components(id_a, id_b): the connected components of the pairs an
 *		aggregate sees, by union-find, for near_duplicate_clusters().
 *
 * Each id gets a slot (a simplehash from PostgreSQL's template maps ids to
 * slots); slots form a forest joined by union by rank with path halving, so
 * the pairs are read once and each costs nearly constant time.  The answer
 * labels every id with the smallest id of its component, as a bigint[n][2]
 * array of (id, label) rows in the order the ids were first seen.
 *
 * Memory is about 70 bytes per distinct id, the answer included (measured:
 * 1.3 GB for 20 million ids); the answer is one array, so
 * there can be at most 1 GB / 16 bytes of ids (54000 beyond).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "base/hash.h"

/* the answer is one array of 16 bytes per id */
#define COMPONENTS_MAX_IDS	((MaxAllocSize - ARR_OVERHEAD_NONULLS(2)) / (2 * sizeof(int64)))

typedef struct IdSlot
{
	int64		id;
	uint32		slot;
	char		status;			/* simplehash's */
} IdSlot;

#define SH_PREFIX idslots
#define SH_ELEMENT_TYPE IdSlot
#define SH_KEY_TYPE int64
#define SH_KEY id
#define SH_HASH_KEY(tb, key) ((uint32) NddHashMix((uint64) (key)))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct Components
{
	idslots_hash *slots;		/* id -> slot */
	int64	   *ids;			/* slot -> id */
	uint32	   *parent;			/* slot -> parent slot (itself at a root) */
	uint8	   *rank;			/* slot -> rank, at roots */
	uint32		count;
	uint32		capacity;
	MemoryContext context;
} Components;

static Components *
ComponentsCreate(MemoryContext context)
{
	Components *c = MemoryContextAlloc(context, sizeof(Components));

	c->context = context;
	c->slots = idslots_create(context, 1024, NULL);
	c->capacity = 1024;
	c->count = 0;
	c->ids = MemoryContextAlloc(context, c->capacity * sizeof(int64));
	c->parent = MemoryContextAlloc(context, c->capacity * sizeof(uint32));
	c->rank = MemoryContextAlloc(context, c->capacity * sizeof(uint8));
	return c;
}

/* The slot of id, made a component of its own when new. */
static uint32
SlotOf(Components *c, int64 id)
{
	bool		found;
	IdSlot	   *entry = idslots_insert(c->slots, id, &found);

	if (found)
		return entry->slot;
	if (c->count >= COMPONENTS_MAX_IDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many rows to cluster at once"),
				 errdetail("The pairs join more than %zu distinct ids.", (Size) COMPONENTS_MAX_IDS)));
	if (c->count == c->capacity)
	{
		c->capacity *= 2;
		c->ids = repalloc_huge(c->ids, (Size) c->capacity * sizeof(int64));
		c->parent = repalloc_huge(c->parent, (Size) c->capacity * sizeof(uint32));
		c->rank = repalloc_huge(c->rank, (Size) c->capacity * sizeof(uint8));
	}
	entry->slot = c->count;
	c->ids[c->count] = id;
	c->parent[c->count] = c->count;
	c->rank[c->count] = 0;
	return c->count++;
}

/* The root of slot's tree, halving the path on the way. */
static inline uint32
Find(Components *c, uint32 slot)
{
	while (c->parent[slot] != slot)
	{
		c->parent[slot] = c->parent[c->parent[slot]];
		slot = c->parent[slot];
	}
	return slot;
}

static void
Union(Components *c, uint32 a, uint32 b)
{
	a = Find(c, a);
	b = Find(c, b);
	if (a == b)
		return;
	if (c->rank[a] < c->rank[b])
	{
		uint32		t = a;

		a = b;
		b = t;
	}
	c->parent[b] = a;
	if (c->rank[a] == c->rank[b])
		c->rank[a]++;
}

/* ndd_components_transfn(state, id_a bigint, id_b bigint); NULL ids are skipped */
PG_FUNCTION_INFO_V1(ndd_components_transfn);
Datum
ndd_components_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	Components *c;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_components_transfn called in non-aggregate context");
	c = PG_ARGISNULL(0) ? ComponentsCreate(aggcontext) : (Components *) PG_GETARG_POINTER(0);
	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
	{
		uint32		a = SlotOf(c, PG_GETARG_INT64(1));
		uint32		b = SlotOf(c, PG_GETARG_INT64(2));

		Union(c, a, b);
	}
	PG_RETURN_POINTER(c);
}

/* Add b's components to a: each id of b joins the root id of its tree. */
static void
MergeComponents(Components *a, Components *b)
{
	for (uint32 i = 0; i < b->count; i++)
	{
		Union(a, SlotOf(a, b->ids[i]), SlotOf(a, b->ids[Find(b, i)]));
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/* Parallel workers' (or shards') states: the union of their components. */
PG_FUNCTION_INFO_V1(ndd_components_combinefn);
Datum
ndd_components_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	Components *a;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "ndd_components_combinefn called in non-aggregate context");
	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(PG_ARGISNULL(0) ? NULL : PG_GETARG_POINTER(0));
	a = PG_ARGISNULL(0) ? ComponentsCreate(aggcontext) : (Components *) PG_GETARG_POINTER(0);
	MergeComponents(a, (Components *) PG_GETARG_POINTER(1));
	PG_RETURN_POINTER(a);
}

/* The state as bytea: (id, the id at its root) per id, in slot order. */
PG_FUNCTION_INFO_V1(ndd_components_serialfn);
Datum
ndd_components_serialfn(PG_FUNCTION_ARGS)
{
	Components *c = (Components *) PG_GETARG_POINTER(0);
	Size		len = VARHDRSZ + (Size) c->count * 2 * sizeof(int64);
	bytea	   *out = palloc_extended(len, MCXT_ALLOC_HUGE);
	char	   *p = VARDATA(out);

	SET_VARSIZE(out, len);
	for (uint32 i = 0; i < c->count; i++)
	{
		int64		pair[2] = {c->ids[i], c->ids[Find(c, i)]};

		memcpy(p, pair, sizeof(pair));
		p += sizeof(pair);
	}
	PG_RETURN_BYTEA_P(out);
}

/* The state back from ndd_components_serialfn. */
PG_FUNCTION_INFO_V1(ndd_components_deserialfn);
Datum
ndd_components_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	const char *p = VARDATA_ANY(in);
	Size		n = VARSIZE_ANY_EXHDR(in);
	Components *c = ComponentsCreate(CurrentMemoryContext);

	if (n % (2 * sizeof(int64)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid ndd_components state")));
	for (Size off = 0; off < n; off += 2 * sizeof(int64))
	{
		int64		pair[2];

		memcpy(pair, p + off, sizeof(pair));
		Union(c, SlotOf(c, pair[0]), SlotOf(c, pair[1]));
	}
	PG_RETURN_POINTER(c);
}

/* ndd_components_finalfn(state): bigint[n][2] of (id, smallest id of its component) */
PG_FUNCTION_INFO_V1(ndd_components_finalfn);
Datum
ndd_components_finalfn(PG_FUNCTION_ARGS)
{
	Components *c;
	int64	   *label;
	ArrayType  *result;
	int64	   *rows;
	Size		nbytes;
	int			dims[2];
	int			lbs[2] = {1, 1};

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	c = (Components *) PG_GETARG_POINTER(0);

	/* the smallest id of each component, kept at its root */
	label = MemoryContextAllocHuge(CurrentMemoryContext, Max(c->count, 1) * sizeof(int64));
	for (uint32 i = 0; i < c->count; i++)
		label[i] = PG_INT64_MAX;
	for (uint32 i = 0; i < c->count; i++)
	{
		uint32		root = Find(c, i);

		label[root] = Min(label[root], c->ids[i]);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	if (c->count == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT8OID));
	dims[0] = c->count;
	dims[1] = 2;
	nbytes = ARR_OVERHEAD_NONULLS(2) + (Size) c->count * 2 * sizeof(int64);
	result = palloc0(nbytes);
	SET_VARSIZE(result, nbytes);
	result->ndim = 2;
	result->dataoffset = 0;
	result->elemtype = INT8OID;
	memcpy(ARR_DIMS(result), dims, sizeof(dims));
	memcpy(ARR_LBOUND(result), lbs, sizeof(lbs));
	rows = (int64 *) ARR_DATA_PTR(result);
	for (uint32 i = 0; i < c->count; i++)
	{
		rows[2 * i] = c->ids[i];
		rows[2 * i + 1] = label[Find(c, i)];
	}
	PG_RETURN_ARRAYTYPE_P(result);
}
