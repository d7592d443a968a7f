/*
 * minhash_topk.c
 *		Exact top-k by minhash similarity, counted from the posting lists of
 *		a minhash_ops index of one-row bands.
 *
 * In such an index every band is one sketch position, so a row that agrees
 * with the query on a position holds the query's key for it: the number of
 * the query's keys a row holds bounds from above the positions it agrees
 * on (keys of key_bits bits may also collide, which only raises the bound).
 * Reading the query's posting lists once and counting each row's keys
 * therefore ranks every row by an upper bound of its similarity; reading
 * the rows with the highest counts from the table gives their exact
 * similarity, and the search stops when no unread count can reach the k-th
 * exact one.
 *
 * GIN's own scan does the same union of posting lists one row at a time,
 * with every list visited for every row (see bench/README.md, topk.sh);
 * here the lists are read in heap order, a chunk of heap blocks at a time,
 * into a dense table of counters that stays in cache.  A first try leaves
 * the few longest lists unread (positions that common phrases win, held
 * by a large part of the table) and adds their number to every bound; it
 * answers whenever the k-th row agrees on more positions than that.
 *
 * A partitioned or inherited table is counted table by table and the
 * answers merged.  near_duplicate_top_k (sql/ndd.sql) calls this first and
 * falls back to similar() passes when it cannot answer: a table without a
 * suitable index, a foreign partition, a table of Citus, row-level
 * security, a non-integer or NULL id, or more candidates at the k-th count
 * than work_mem holds.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/gin_private.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "lib/binaryheap.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "lib/stringinfo.h"

#include "base/sketch_column.h"
#include "index/gin_postings.h"
#include "index/minhash_gin.h"
#include "sketch/minhash.h"

/* counters in the dense table of one chunk of heap blocks (512 kB) */
#define TOPK_CHUNK_CELLS	(256 * 1024)

/* the dense table, and the list of its cells that reach the offer count */
#define TOPK_COUNTING_BYTES (TOPK_CHUNK_CELLS * sizeof(uint16) + TOPK_CHUNK_CELLS / 8 * sizeof(int))

/* rows kept for reading by count, at least */
#define TOPK_MIN_KEPT		2048

/* lists left unread on the first try: at most, and how much longer than the median */
#define TOPK_MAX_SKIPPED	8
#define TOPK_SKIP_FACTOR	4

/* the first try offers rows that hold this many of the query's keys */
#define TOPK_OFFER_AT		6


/*
 * A row that holds count of the query's keys, packed as one number that
 * orders by count, then by row: count << 48 | block << 16 | offset.
 */
typedef uint64 Candidate;

static inline Candidate
MakeCandidate(int count, BlockNumber block, OffsetNumber offset)
{
	return (uint64) count << 48 | (uint64) block << 16 | offset;
}

static inline int
CandidateCount(Candidate c)
{
	return (int) (c >> 48);
}

/* The best rows by count: a min-heap of at most its space of candidates. */
typedef struct CandidateHeap
{
	binaryheap *heap;
	int			dropped_max;	/* the highest count not kept */
} CandidateHeap;

/* A line pointer beyond the dense table's slots, counted in a hash table. */
typedef struct OverflowCount
{
	ItemPointerData tid;
	uint16		count;
} OverflowCount;

/* A row of the answer. */
typedef struct TopRow
{
	int64		id;
	double		similarity;
} TopRow;

/* Is a ranked before b: more similar, or as similar and a smaller id? */
static inline bool
TopRowBefore(const TopRow *a, const TopRow *b)
{
	return a->similarity > b->similarity ||
		(a->similarity == b->similarity && a->id < b->id);
}

/* binaryheap's order for a min-heap: the greater candidate sinks */
static int
CandidateSinks(Datum a, Datum b, void *arg)
{
	Candidate	x = DatumGetUInt64(a);
	Candidate	y = DatumGetUInt64(b);

	return (x < y) - (x > y);
}

/* Offer a candidate to the heap of the best counts. */
static inline void
HeapOffer(CandidateHeap *h, Candidate c)
{
	binaryheap *bh = h->heap;
	Candidate	least;

	if (bh->bh_size < bh->bh_space)
	{
		binaryheap_add(bh, UInt64GetDatum(c));
		return;
	}
	least = DatumGetUInt64(binaryheap_first(bh));
	if (c > least)
	{
		binaryheap_replace_first(bh, UInt64GetDatum(c));
		c = least;
	}
	h->dropped_max = Max(h->dropped_max, CandidateCount(c));
}

static int
CandidateByCountDesc(const void *a, const void *b)
{
	Candidate	x = DatumGetUInt64(*(const Datum *) a);
	Candidate	y = DatumGetUInt64(*(const Datum *) b);

	return (x < y) - (x > y);
}

/* Count a line pointer beyond the dense table's slots. */
static void
CountOverflow(HTAB **overflow, ItemPointer item)
{
	bool		found;
	OverflowCount *entry;

	if (*overflow == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(ItemPointerData);
		ctl.entrysize = sizeof(OverflowCount);
		ctl.hcxt = CurrentMemoryContext;
		*overflow = hash_create("ndd top-k counts", 1024, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(*overflow, item, HASH_ENTER, &found);
	entry->count = found ? entry->count + 1 : 1;
}

/* Offer the row of a cell of the dense table. */
static inline void
OfferCell(CandidateHeap *h, BlockNumber lo, int slots, int cell, int count)
{
	HeapOffer(h, MakeCandidate(count, lo + cell / slots, cell % slots + 1));
}

/*
 * The counts of one chunk of heap blocks, lo up to hi: a dense table of
 * slots line pointers per block, the list of its cells that reach
 * offer_at, and a hash table of the rare line pointer beyond the slots.
 */
typedef struct ChunkCounts
{
	uint16	   *counts;
	int		   *reached;
	int			nreached;		/* past max_reached: too many to list */
	int			max_reached;
	HTAB	   *overflow;
	BlockNumber lo;
	uint64		hi;
	int			slots;
	int			offer_at;
} ChunkCounts;

/* The first block of the next chunk: the lowest a cursor is at, or invalid. */
static inline BlockNumber
NextChunkStart(const PostingCursor *cursors, int ncursors)
{
	BlockNumber lo = InvalidBlockNumber;

	for (int i = 0; i < ncursors; i++)
		if (!cursors[i].done)
			lo = Min(lo, ItemPointerGetBlockNumberNoCheck(&cursors[i].items[cursors[i].next]));
	return lo;
}

/*
 * Count items[next ..] up to the first past the chunk, and return where
 * that one is (nitems if none).
 */
static inline int
CountPageInChunk(ChunkCounts *t, ItemPointer items, int next, int nitems)
{
	/* the table and the page's items in locals: counts[] may alias anything */
	uint16	   *counts = t->counts;
	int		   *reached = t->reached;
	int			nreached = t->nreached;
	int			max_reached = t->max_reached;
	BlockNumber lo = t->lo;
	uint64		hi = t->hi;
	int			slots = t->slots;
	int			offer_at = t->offer_at;

	for (; next < nitems; next++)
	{
		BlockNumber block = ItemPointerGetBlockNumberNoCheck(&items[next]);
		OffsetNumber offset = ItemPointerGetOffsetNumberNoCheck(&items[next]);

		if (block >= hi)
			break;
		if (likely(offset >= 1 && offset <= slots))
		{
			int			cell = (block - lo) * slots + offset - 1;

			/* the cells reaching offer_at, while there is room */
			if (++counts[cell] == offer_at && nreached <= max_reached)
			{
				if (nreached < max_reached)
					reached[nreached] = cell;
				nreached++;
			}
		}
		else
			CountOverflow(&t->overflow, &items[next]);
	}
	t->nreached = nreached;
	return next;
}

/* Count a cursor's items in the chunk, a page at a time.  Returns the postings read. */
static inline int64
CountCursorInChunk(ChunkCounts *t, PostingCursor *c, Relation index)
{
	int64		postings = 0;

	while (!c->done)
	{
		int			next = CountPageInChunk(t, c->items, c->next, c->nitems);

		postings += next - c->next;
		c->next = next;
		if (next < c->nitems)
			break;
		PostingCursorNextPage(c, index);
	}
	return postings;
}

/* Offer the chunk's cells that reached offer_at. */
static void
OfferChunk(CandidateHeap *h, const ChunkCounts *t)
{
	const uint16 *counts = t->counts;
	BlockNumber lo = t->lo;
	int			slots = t->slots;

	if (t->nreached <= t->max_reached)
	{
		for (int i = 0; i < t->nreached; i++)
			OfferCell(h, lo, slots, t->reached[i], counts[t->reached[i]]);
	}
	else
	{
		/* too many to list: every cell, skipping zeros four at a time */
		for (int cell = 0; cell < TOPK_CHUNK_CELLS; cell += 4)
		{
			uint64		word;

			memcpy(&word, &counts[cell], sizeof(word));
			if (word == 0)
				continue;
			for (int c = cell; c < cell + 4; c++)
				if (counts[c] >= t->offer_at)
					OfferCell(h, lo, slots, c, counts[c]);
		}
	}
}

/* Offer the line pointers of the hash table that reached offer_at, and free it. */
static void
OfferOverflow(CandidateHeap *h, HTAB *overflow, int offer_at)
{
	HASH_SEQ_STATUS status;
	OverflowCount *entry;

	hash_seq_init(&status, overflow);
	while ((entry = hash_seq_search(&status)) != NULL)
		if (entry->count >= offer_at)
			HeapOffer(h, MakeCandidate(entry->count,
									   ItemPointerGetBlockNumberNoCheck(&entry->tid),
									   ItemPointerGetOffsetNumberNoCheck(&entry->tid)));
	hash_destroy(overflow);
}

/*
 * Count, for every row, the query's keys it holds, over all the cursors,
 * and keep the best counts in h.  The lists are in heap order; each round
 * counts the items of a chunk of heap blocks in a dense table of slots
 * line pointers per block, and the rare line pointer beyond them in a hash
 * table.  A row is offered to h when its count reaches offer_at; rows that
 * stay below count as dropped at offer_at - 1.  Returns the postings read.
 */
static int64
CountKeys(PostingCursor *cursors, int ncursors, Relation index, int slots,
		  int offer_at, CandidateHeap *h)
{
	int			chunk_blocks = TOPK_CHUNK_CELLS / slots;
	int64		postings = 0;
	ChunkCounts t;

	t.counts = palloc(TOPK_CHUNK_CELLS * sizeof(uint16));
	t.max_reached = TOPK_CHUNK_CELLS / 8;
	t.reached = palloc(t.max_reached * sizeof(int));
	t.overflow = NULL;
	t.slots = slots;
	t.offer_at = offer_at;

	if (offer_at > 1)
		h->dropped_max = Max(h->dropped_max, offer_at - 1);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		t.lo = NextChunkStart(cursors, ncursors);
		if (t.lo == InvalidBlockNumber)
			break;
		t.hi = (uint64) t.lo + chunk_blocks;
		t.nreached = 0;
		memset(t.counts, 0, TOPK_CHUNK_CELLS * sizeof(uint16));
		for (int i = 0; i < ncursors; i++)
			postings += CountCursorInChunk(&t, &cursors[i], index);
		OfferChunk(h, &t);
	}
	if (t.overflow)
		OfferOverflow(h, t.overflow, offer_at);
	pfree(t.reached);
	pfree(t.counts);
	return postings;
}

/* What one top-k search reads and keeps. */
typedef struct TopKSearch
{
	Relation	rel;
	Relation	index;
	OffsetNumber column;		/* of the index */
	GinState	ginstate;
	Snapshot	snapshot;
	const MinHash *query;
	Datum	   *keys;			/* the query's keys, sorted */
	int			nkeys;
	int			slack;			/* positions in no band */
	int			slots;			/* line pointers per block counted densely */
	int			cap;			/* rows kept for reading */
	int			k;
	AttrNumber	sketch_attnum;
	AttrNumber	id_attnum;
	Oid			id_type;
	int64		postings;		/* read, over all tries and tables */
	int			unread;			/* lists left unread by the last try */
	int			all_unread;		/* the most, of the tables' answers */
	const char *sketch_name;
	const char *id_name;
} TopKSearch;

typedef enum TopKOutcome
{
	TOPK_ANSWERED,				/* top[0 .. *ntop) is the answer above 0 */
	TOPK_UNBOUNDED,				/* an unread row could reach the answer */
	TOPK_GIVE_UP				/* a NULL id: the caller's fallback orders it */
} TopKOutcome;

static int
CursorByEstimate(const void *a, const void *b)
{
	uint64		x = ((const PostingCursor *) a)->estimate;
	uint64		y = ((const PostingCursor *) b)->estimate;

	return (x > y) - (x < y);
}

/*
 * How many of the longest lists (sorted by estimate, shortest first) to
 * leave unread: those much longer than the others, as long as few enough
 * that rows agreeing on the usual k-th count still show in the rest.
 */
static int
ListsToSkip(const PostingCursor *cursors, int nkeys)
{
	uint64		median = cursors[nkeys / 2].estimate;
	int			skip = 0;

	while (skip < TOPK_MAX_SKIPPED && skip < nkeys / 4 &&
		   cursors[nkeys - 1 - skip].estimate > TOPK_SKIP_FACTOR * Max(median, 1))
		skip++;
	return skip;
}

/*
 * A cursor on each of the query's lists and one on the pending list's
 * rows, s->nkeys + 1 in all, ordered for counting: the lists to read (all
 * but the *unread longest), the pending list's rows, then the lists left
 * unread.  skip_longest is *unread, or -1 to let ListsToSkip choose.
 */
static PostingCursor *
OpenCursors(TopKSearch *s, int skip_longest, int *unread)
{
	PostingCursor *cursors = palloc((s->nkeys + 1) * sizeof(PostingCursor));

	/* the pending list first (see PostingCursorOpenPending), then the entry tree */
	PostingCursorOpenPending(&cursors[s->nkeys], s->index, &s->ginstate, s->column,
					  s->keys, s->nkeys);
	for (int i = 0; i < s->nkeys; i++)
	{
		CHECK_FOR_INTERRUPTS();
		PostingCursorOpenDeferred(&cursors[i], s->index, &s->ginstate, s->column, s->keys[i], s->snapshot);
	}
	qsort(cursors, s->nkeys, sizeof(PostingCursor), CursorByEstimate);
	*unread = skip_longest >= 0 ? skip_longest : ListsToSkip(cursors, s->nkeys);
	/* the first leaves of the lists to read; those left unread stay undecoded */
	for (int i = 0; i < s->nkeys - *unread; i++)
		PostingCursorLoad(&cursors[i], s->index);

	/* the lists read: the shortest, and the pending list's rows */
	if (*unread > 0)
	{
		PostingCursor pending = cursors[s->nkeys];

		cursors[s->nkeys] = cursors[s->nkeys - *unread];
		cursors[s->nkeys - *unread] = pending;
	}
	return cursors;
}

/*
 * Fetch a candidate's row into slot, with its similarity to the query.
 * False when the snapshot sees no such row, its sketch is NULL, or it
 * agrees with the query nowhere.
 */
static bool
FetchCandidate(TopKSearch *s, IndexFetchTableData *fetch, TupleTableSlot *slot,
			   Candidate c, double *similarity)
{
	ItemPointerData tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		isnull;
	Datum		value;
	MinHash    *sketch;

	ItemPointerSet(&tid, (BlockNumber) (c >> 16), (OffsetNumber) (c & 0xFFFF));
	if (!table_index_fetch_tuple(fetch, &tid, s->snapshot, slot, &call_again, &all_dead))
		return false;
	value = slot_getattr(slot, s->sketch_attnum, &isnull);
	if (isnull)
		return false;
	sketch = DatumGetMinHashP(value);
	*similarity = MinHashSimilarity(s->query, sketch);
	if ((Pointer) sketch != DatumGetPointer(value))
		pfree(sketch);
	return *similarity > 0.0;
}

/* Insert row into the sorted answer top[0 .. *ntop) of at most k, dropping its last if full. */
static inline void
AnswerInsert(TopRow *top, int *ntop, int k, const TopRow *row)
{
	int			at;

	if (*ntop == k && !TopRowBefore(row, &top[k - 1]))
		return;
	at = *ntop < k ? (*ntop)++ : k - 1;
	while (at > 0 && TopRowBefore(row, &top[at - 1]))
	{
		top[at] = top[at - 1];
		at--;
	}
	top[at] = *row;
}

/*
 * Read the kept rows by falling count into the answer top[0 .. *ntop),
 * and set *stopped when no row left can reach its k-th.  Returns
 * TOPK_GIVE_UP at a NULL id, else TOPK_ANSWERED.
 */
static TopKOutcome
ReadByCount(TopKSearch *s, binaryheap *kept, int bound_slack,
			TopRow *top, int *ntop, bool *stopped)
{
	int			num_perm = s->query->num_perm;
	TopKOutcome outcome = TOPK_ANSWERED;
	IndexFetchTableData *fetch;
	TupleTableSlot *slot;

	/* by falling count: the heap's array, sorted */
	qsort(kept->bh_nodes, kept->bh_size, sizeof(Datum), CandidateByCountDesc);
	fetch = table_index_fetch_begin(s->rel);
	slot = table_slot_create(s->rel, NULL);
	*ntop = 0;
	for (int i = 0; i < kept->bh_size; i++)
	{
		Candidate	c = DatumGetUInt64(kept->bh_nodes[i]);

		/* counts may exceed the bands only by pending rows seen twice */
		int			agreeing = Min(CandidateCount(c), s->nkeys) + bound_slack;
		double		bound = (double) Min(agreeing, num_perm) / num_perm;
		TopRow		row;
		Datum		id;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (*ntop == s->k && bound < top[s->k - 1].similarity)
		{
			*stopped = true;
			break;
		}
		if (!FetchCandidate(s, fetch, slot, c, &row.similarity))
			continue;
		id = slot_getattr(slot, s->id_attnum, &isnull);
		if (isnull)
		{
			outcome = TOPK_GIVE_UP;
			break;
		}
		row.id = IdGetInt64(id, s->id_type);
		AnswerInsert(top, ntop, s->k, &row);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_index_fetch_end(fetch);
	return outcome;
}

/*
 * Could a row that agrees with the query on at most rest positions reach
 * the answer top[0 .. ntop)?  Any row above 0 could while it has fewer
 * than k rows.
 */
static bool
RestCouldReach(const TopKSearch *s, int rest, const TopRow *top, int ntop)
{
	int			num_perm = s->query->num_perm;

	if (ntop == s->k)
		return (double) Min(rest, num_perm) / num_perm >= top[s->k - 1].similarity;
	return rest > 0;
}

/*
 * Count the query's keys in all its lists but the skip_longest longest
 * (when skip_longest is -1, as many as ListsToSkip chooses), then read
 * rows by falling count until no row left can reach the k-th.  A row's
 * agreeing positions are at most its count, plus the positions of the
 * lists left unread and of no band.
 */
static TopKOutcome
SearchOnce(TopKSearch *s, int skip_longest, int offer_at, int cap,
		   TopRow *top, int *ntop)
{
	int			unread;
	PostingCursor *cursors = OpenCursors(s, skip_longest, &unread);
	int			bound_slack = s->slack + unread;
	CandidateHeap heap;
	bool		stopped = false;
	TopKOutcome outcome;

	/*
	 * Lists short enough that every row in them fits in the heap: offer
	 * them all, so that a k-th row at a low count (or none above 0) needs
	 * no second try.
	 */
	if (offer_at > 1)
	{
		uint64		total = 0;

		for (int i = 0; i < s->nkeys - unread; i++)
			total += cursors[i].estimate;
		if (total <= (uint64) cap)
			offer_at = 1;
	}
	heap.heap = binaryheap_allocate(cap, CandidateSinks, NULL);
	heap.dropped_max = 0;
	s->postings += CountKeys(cursors, s->nkeys - unread + 1, s->index, s->slots,
							 offer_at, &heap);
	PostingCursorsClose(cursors, s->nkeys + 1);

	outcome = ReadByCount(s, heap.heap, bound_slack, top, ntop, &stopped);

	/*
	 * Every kept row was read: the rows not kept, and those in no list read,
	 * must not be able to reach the answer.
	 */
	if (outcome == TOPK_ANSWERED && !stopped &&
		RestCouldReach(s, heap.dropped_max + bound_slack, top, *ntop))
		outcome = TOPK_UNBOUNDED;
	binaryheap_free(heap.heap);
	s->unread = unread;
	return outcome;
}

/*
 * A minhash_ops index on column attnum of rel, of one-row bands, over
 * every row.  Returns its OID, or InvalidOid; *column is its column number.
 */
static Oid
FindCountingIndex(Relation rel, AttrNumber attnum, Oid family, int *column)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		if (index->rd_rel->relam == GIN_AM_OID &&
			index->rd_index->indisvalid && index->rd_index->indisready &&
			RelationGetIndexPredicate(index) == NIL)
		{
			for (int col = 0; col < index->rd_index->indnatts; col++)
			{
				int			bands,
							rows;

				if (index->rd_index->indkey.values[col] != attnum ||
					index->rd_opfamily[col] != family)
					continue;
				MinHashGinBanding(index, col + 1, &bands, &rows);
				if (rows == 1)
				{
					found = RelationGetRelid(index);
					*column = col + 1;
				}
			}
		}
		index_close(index, AccessShareLock);
		if (OidIsValid(found))
			break;
	}
	list_free(indexes);
	return found;
}

/*
 * Line pointers counted densely per heap block: half as many again as
 * the rows a page holds on average, when the table's statistics say; at
 * most twice what fits of rows with a sketch.  Rows beyond go to a hash
 * table.
 */
static int
DenseSlots(Relation rel, int num_perm)
{
	int			slots;

	slots = BLCKSZ / (MAXALIGN(SizeofHeapTupleHeader) + MINHASH_HEADER_SIZE +
					  sizeof(uint32) * num_perm + sizeof(ItemIdData));
	slots = Min(Max(2 * slots, 8), MaxHeapTuplesPerPage);
	if (rel->rd_rel->relpages > 0 && rel->rd_rel->reltuples > 0)
		slots = Min(slots, (int) ceil(1.5 * rel->rd_rel->reltuples / rel->rd_rel->relpages) + 1);
	return TYPEALIGN(4, slots);
}

/*
 * Set s up to search one table with storage: its columns, its counting
 * index (opened), the query's keys in it.  False when the table has no
 * counting index or cannot be counted.
 */
static bool
OpenRelation(TopKSearch *s, Relation rel, Oid family)
{
	Oid			index_oid;
	int			column = 0;
	int			bands,
				rows;
	int32		nkeys;

	if (rel->rd_rel->relkind != RELKIND_RELATION && rel->rd_rel->relkind != RELKIND_MATVIEW)
		return false;
	/* a partition's columns may sit at other numbers than its parent's */
	s->sketch_attnum = get_attnum(RelationGetRelid(rel), s->sketch_name);
	s->id_attnum = get_attnum(RelationGetRelid(rel), s->id_name);
	if (s->sketch_attnum <= 0 || s->id_attnum <= 0)
		return false;
	index_oid = FindCountingIndex(rel, s->sketch_attnum, family, &column);
	if (!OidIsValid(index_oid))
		return false;

	s->rel = rel;
	s->index = index_open(index_oid, AccessShareLock);
	s->column = column;
	s->keys = MinHashGinIndexKeys(s->index, column, s->query, &nkeys, &bands, &rows);
	s->nkeys = nkeys;
	s->slack = s->query->num_perm - bands;
	qsort(s->keys, s->nkeys, sizeof(Datum), GinKeyCompare);
	s->slots = DenseSlots(rel, s->query->num_perm);

	/* the serializable read is of the whole table, as a scan's */
	PredicateLockRelation(rel, s->snapshot);
	initGinState(&s->ginstate, s->index);
	return true;
}

/*
 * The longest lists left unread, rows offered from a few keys up; then
 * if need be all lists, rows offered from what the k-th row found agrees
 * on; then room for as many rows as work_mem holds.
 */
static TopKOutcome
SearchTries(TopKSearch *s, TopRow *found, int *nfound)
{
	TopKOutcome outcome = SearchOnce(s, -1, TOPK_OFFER_AT, s->cap, found, nfound);

	for (int try = 0; try < 2 && outcome == TOPK_UNBOUNDED; try++)
	{
		int			offer_at = 1;
		int			cap = s->cap;

		if (*nfound == s->k)
			offer_at = Max(Min(TOPK_OFFER_AT, (int) rint(found[s->k - 1].similarity * s->query->num_perm)), 1);
		if (try == 1)
		{
			cap = (int) Min(((Size) work_mem * 1024 - TOPK_COUNTING_BYTES) /
							(sizeof(Datum) + sizeof(TopRow)), (Size) MaxAllocSize / sizeof(Datum));
			if (cap <= s->cap)
				break;
		}
		outcome = SearchOnce(s, 0, offer_at, cap, found, nfound);
	}
	return outcome;
}

/* Merge found[0 .. nfound) into top[0 .. *ntop), both sorted: keep the first k. */
static void
MergeAnswer(TopRow *top, int *ntop, const TopRow *found, int nfound, int k)
{
	TopRow	   *merged = palloc(k * sizeof(TopRow));
	int			a = 0,
				b = 0,
				n = 0;

	while (n < k && (a < *ntop || b < nfound))
		merged[n++] = (b >= nfound || (a < *ntop && TopRowBefore(&top[a], &found[b])))
			? top[a++] : found[b++];
	memcpy(top, merged, n * sizeof(TopRow));
	*ntop = n;
	pfree(merged);
}

/*
 * The answer above 0 from one table with storage (a leaf of tbl), merged
 * into top[0 .. *ntop): *ntop stays at most k.  Returns TOPK_GIVE_UP when
 * the table has no counting index or cannot be counted.
 */
static TopKOutcome
SearchRelation(TopKSearch *s, Relation rel, Oid family, TopRow *top, int *ntop,
			   StringInfo index_names)
{
	TopRow	   *found;
	int			nfound = 0;
	TopKOutcome outcome;

	if (!OpenRelation(s, rel, family))
		return TOPK_GIVE_UP;
	found = palloc(s->k * sizeof(TopRow));
	outcome = SearchTries(s, found, &nfound);
	if (outcome == TOPK_ANSWERED)
	{
		MergeAnswer(top, ntop, found, nfound, s->k);
		s->all_unread = Max(s->all_unread, s->unread);
		appendStringInfo(index_names, "%s%s", index_names->len > 0 ? ", " : "",
						 RelationGetRelationName(s->index));
	}
	pfree(found);
	index_close(s->index, AccessShareLock);
	return outcome == TOPK_UNBOUNDED ? TOPK_GIVE_UP : outcome;
}

/*
 * Search tbl, or each of its partitions and children with storage, merging
 * the answers into top[0 .. *ntop).  Stops at the first table that does
 * not answer.
 */
static TopKOutcome
SearchTables(TopKSearch *s, Oid relid, Oid family, TopRow *top, int *ntop,
			 StringInfo index_names)
{
	List	   *tables = find_all_inheritors(relid, AccessShareLock, NULL);
	ListCell   *lc;
	TopKOutcome outcome = TOPK_ANSWERED;

	foreach(lc, tables)
	{
		Relation	rel = relation_open(lfirst_oid(lc), AccessShareLock);

		if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
			outcome = SearchRelation(s, rel, family, top, ntop, index_names);
		relation_close(rel, AccessShareLock);
		if (outcome != TOPK_ANSWERED)
			break;
	}
	return outcome;
}

/*
 * The type of tbl's id column, and whether the caller may SELECT it and
 * the sketch column; an error when either does not exist.
 */
static bool
CallerMaySelect(Oid relid, Name sketch_column, Name id_column, Oid *id_type)
{
	AttrNumber	sketch_attnum;
	AttrNumber	id_attnum;

	ErrorIfNoRelation(relid);
	sketch_attnum = get_attnum(relid, NameStr(*sketch_column));
	id_attnum = get_attnum(relid, NameStr(*id_column));
	if (sketch_attnum == InvalidAttrNumber || id_attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						NameStr(sketch_attnum == InvalidAttrNumber ? *sketch_column : *id_column),
						get_rel_name(relid))));
	if (sketch_attnum < 0 || id_attnum < 0 ||
		(pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		 (pg_attribute_aclcheck(relid, sketch_attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
		  pg_attribute_aclcheck(relid, id_attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK)))
		return false;
	*id_type = get_atttype(relid, id_attnum);
	return true;
}

/*
 * Is relid a table of Citus (distributed, reference or Citus local)?  Its
 * rows are in shards; here the table and its indexes are empty shells,
 * which counting would read as the whole table.
 */
static bool
IsCitusTable(Oid relid)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	AttrNumber	attnum;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	if (!OidIsValid(catalog) ||
		(attnum = get_attnum(catalog, "logicalrelid")) == InvalidAttrNumber)
		return false;
	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&key, attnum, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Can the index answer: tbl's rows here, no row security on it, an integer
 * id, a query with keys, and room in work_mem for the rows kept and the
 * dense table.
 */
static bool
CountingApplies(Oid relid, const TopKSearch *s)
{
	return !IsCitusTable(relid) &&
		check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED &&
		(s->id_type == INT2OID || s->id_type == INT4OID || s->id_type == INT8OID) &&
		!(s->query->flags & MINHASH_FLAG_EMPTY) &&
		(Size) s->cap * (sizeof(Datum) + sizeof(TopRow)) + TOPK_COUNTING_BYTES <=
		(Size) work_mem * 1024;
}

/* The answer top[0 .. ntop) as the result's columns. */
static void
AnswerColumns(const TopKSearch *s, const TopRow *top, int ntop,
			  const char *index_names, Datum *result, bool *nulls)
{
	Datum	   *ids = palloc(Max(ntop, 1) * sizeof(Datum));
	Datum	   *sims = palloc(Max(ntop, 1) * sizeof(Datum));

	for (int i = 0; i < ntop; i++)
	{
		ids[i] = Int64GetDatum(top[i].id);
		sims[i] = Float8GetDatum(top[i].similarity);
	}
	result[0] = PointerGetDatum(construct_array(ids, ntop, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	result[1] = PointerGetDatum(construct_array(sims, ntop, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	result[2] = Int64GetDatum(s->postings);
	result[3] = CStringGetTextDatum(index_names);
	result[4] = Int32GetDatum(s->all_unread);
	memset(nulls, false, 5 * sizeof(bool));
}

/*
 * minhash_index_top_k(tbl regclass, sketch_column name, id_column name,
 *                     query minhash, k int,
 *                     OUT ids bigint[], OUT similarities float8[],
 *                     OUT postings bigint, OUT index_name text,
 *                     OUT lists_unread int)
 *
 * The rows of similarity above 0 among the k most similar to query (ties
 * by smaller id), from a minhash_ops index of one-row bands on tbl, or on
 * each of its partitions or children; fewer than k when the rest are all at
 * 0; the postings read, the indexes, and how many of the query's lists the
 * answering try left unread (the most in any one table).  All NULL when it
 * cannot answer.
 */
PG_FUNCTION_INFO_V1(minhash_index_top_k);
Datum
minhash_index_top_k(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Name		sketch_column = PG_GETARG_NAME(1);
	Name		id_column = PG_GETARG_NAME(2);
	MinHash    *query = PG_GETARG_MINHASH_P(3);
	int32		k = PG_GETARG_INT32(4);
	TupleDesc	result_desc;
	Datum		result[5];
	bool		nulls[5] = {true, true, true, true, true};
	TopKSearch	s;

	if (get_call_result_type(fcinfo, NULL, &result_desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (k <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be positive, not %d", k)));

	/*
	 * What a plain SELECT of the two columns of tbl would be refused, and
	 * anything a scan of tbl would see otherwise (its policies), is left to
	 * the caller's fallback; nothing is locked that the caller may not read.
	 * Its partitions and children are read as a scan of tbl reads them,
	 * with tbl's rights and policies.
	 */
	memset(&s, 0, sizeof(s));
	if (!CallerMaySelect(relid, sketch_column, id_column, &s.id_type))
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(result_desc, result, nulls)));
	s.sketch_name = NameStr(*sketch_column);
	s.id_name = NameStr(*id_column);
	s.query = query;
	s.k = k;
	s.snapshot = GetActiveSnapshot();

	/*
	 * Rows are kept for reading by count: k of them and room for ties, dead
	 * rows and the lists left unread.  If work_mem cannot hold them and the
	 * dense table, fall back.
	 */
	s.cap = Max(4 * k, TOPK_MIN_KEPT);
	if (CountingApplies(relid, &s))
	{
		Oid			family = MinHashGinFamily(fcinfo->flinfo->fn_oid);
		TopRow	   *top = palloc(k * sizeof(TopRow));
		int			ntop = 0;
		StringInfoData index_names;

		initStringInfo(&index_names);
		if (SearchTables(&s, relid, family, top, &ntop, &index_names) == TOPK_ANSWERED &&
			index_names.len > 0)
			AnswerColumns(&s, top, ntop, index_names.data, result, nulls);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(result_desc, result, nulls)));
}
