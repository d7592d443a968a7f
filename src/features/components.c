/*
 * components.c
 *		The connected components of pairs of ids, by union-find: for C
 *		(components.h; near_duplicate_clusters feeds it the pairs directly)
 *		and as the aggregate ndd_components(id_a, id_b).
 *
 * Each id gets a slot (a simplehash from PostgreSQL's template maps ids to
 * slots); slots form a forest joined by union by rank with path halving, so
 * the pairs are read once and each costs nearly constant time.  A label is
 * the smallest id of its component.  The aggregate answers a bigint[n][2]
 * array of (id, label) rows in the order the ids were first seen.
 *
 * Memory: the union-find takes 30 to 55 bytes per distinct id as its
 * tables double (measured: 15.2 MB for 280,000 ids), and the labels 8 more.
 * The aggregate's answer adds 16, about 70 bytes per id in all (measured:
 * 1.3 GB for 20 million ids); it is one array, so there can be at most 1 GB
 * / 16 bytes of ids (54000 beyond).  C that walks the labels (components.h)
 * builds no array, but keeps that limit.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"

#include "base/hash.h"
#include "features/components.h"

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

struct Components
{
	idslots_hash *slots;		/* id -> slot */
	int64	   *ids;			/* slot -> id */
	uint32	   *parent;			/* slot -> parent slot (itself at a root) */
	uint8	   *rank;			/* slot -> rank, at roots */
	uint32		count;
	uint32		capacity;
	MemoryContext context;
};

Components *
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

/* Join the components of id_a and id_b. */
void
ComponentsAddPair(Components *c, int64 id_a, int64 id_b)
{
	uint32		a = SlotOf(c, id_a);
	uint32		b = SlotOf(c, id_b);

	Union(c, a, b);
}

/* The number of slots: the distinct ids seen so far. */
uint32
ComponentsCount(const Components *c)
{
	return c->count;
}

/* Slot -> id; valid until the next pair moves it. */
const int64 *
ComponentsIds(const Components *c)
{
	return c->ids;
}

/*
 * Slot -> the smallest id of its component.  Two passes: the smallest id of
 * each component is kept at its root, then each slot takes its root's (a
 * root's entry is only ever its own, so one array does for both).
 */
int64 *
ComponentsLabels(Components *c)
{
	int64	   *label = MemoryContextAllocHuge(CurrentMemoryContext,
											   Max(c->count, 1) * sizeof(int64));

	for (uint32 i = 0; i < c->count; i++)
		label[i] = PG_INT64_MAX;
	for (uint32 i = 0; i < c->count; i++)
	{
		uint32		root = Find(c, i);

		label[root] = Min(label[root], c->ids[i]);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	for (uint32 i = 0; i < c->count; i++)
	{
		label[i] = label[Find(c, i)];
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	return label;
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
		ComponentsAddPair(c, PG_GETARG_INT64(1), PG_GETARG_INT64(2));
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
		ComponentsAddPair(c, pair[0], pair[1]);
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
	if (c->count == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT8OID));
	label = ComponentsLabels(c);

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
		rows[2 * i + 1] = label[i];
	}
	pfree(label);
	PG_RETURN_ARRAYTYPE_P(result);
}
