/*
 * minhash_lookup_scan.c
 *		A scan that answers "col % q" through a minhash_ops index by counting
 *		the query's keys per row from the posting lists, instead of GIN's
 *		own scan.
 *
 * Every row a GIN scan of minhash_ops returns holds at least `required` of
 * the query's band keys (minhash_gin.c).  GIN's scan finds them by visiting
 * every one of the query's lists for every row in their union, so its cost
 * is the union's length times the number of keys (32 at the default 0.8):
 * at 1M rows that loop was two thirds of a lookup.  This scan reads the
 * same lists in heap order, a window of a page of each at a time, counts
 * the postings of each heap block and then, in the few blocks that can
 * reach the count, of each row, and fetches only the rows that reach it.  Its rows are exactly GIN's: the same keys,
 * the same count, and every restriction of the query checked again on the
 * fetched row (the `%` itself included), as GIN's recheck does.
 *
 * The planner hook offers it beside an unparameterized bitmap scan of a
 * minhash_ops index whose only index condition is a `%` (written as such,
 * or made from similar() by its support function), at a little less than
 * that scan's cost: it reads the same pages.  ndd.lookup_scan = off leaves
 * GIN's scan alone.  The hook is installed when ndd's library is loaded,
 * which the first call of any ndd function in a session does (or
 * session_preload_libraries).
 */
#include "postgres.h"

#include "access/gin_private.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opfamily.h"
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
/* 18 moved the EXPLAIN property writers to their own header */
#include "commands/explain_format.h"
#endif
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "base/ndd_limits.h"
#include "base/sort_uint64.h"
#include "index/gin_postings.h"
#include "index/minhash_gin.h"
#include "index/minhash_lookup_scan.h"
#include "keys/lsh.h"
#include "sketch/minhash.h"

/* the lookup scan's share of the bitmap scan's cost: same pages, less CPU */
#define LOOKUP_COST_SHARE	0.9

/*
 * Counters of postings per heap block, block % cells: two cells per posting
 * of the largest window so far (a power of two, from 1 kB to 64 kB), so that
 * blocks seldom share one.  Sharing only adds rows to the exact count that
 * follows.  Allocated at the first window, not for a node that never reads.
 */
#define LOOKUP_MIN_CELLS	1024
#define LOOKUP_MAX_CELLS	(64 * 1024)

/* ndd.lookup_scan: registered by ndd.c */
bool		ndd_lookup_scan = true;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* The executor state of one lookup scan. */
typedef struct LookupScanState
{
	CustomScanState css;
	ExprState  *query;			/* the right side of the `%` */
	int			strategy;		/* NDD_MINHASH_SIMILAR(_QUERY)_STRATEGY */
	Oid			index_oid;
	int			column;			/* of the index */
	Relation	index;
	GinState	ginstate;
	MemoryContext scan_cxt;		/* what one scan reads, freed by a rescan */
	IndexFetchTableData *fetch;
	TupleTableSlot *fetched;	/* the table's own kind of slot */

	/* one scan (reset by a rescan) */
	bool		started;
	bool		all_rows;		/* threshold 0: every row, as GIN's full scan */
	TableScanDesc heap_scan;
	PostingCursor *cursors;		/* the query's lists, then the pending list's hits */
	int			ncursors;
	int			required;		/* keys a row must hold */
	uint8	   *block_counts;	/* postings per heap block, by block % block_cells */
	uint32		block_cells;	/* a power of two; 0 before the first window */
	uint64	   *window;			/* the postings of one window, as ItemNumber()s */
	int			window_size;
	uint64	   *found;			/* of them, the rows that reach the count, in heap order */
	int			nfound;
	int			next_found;
} LookupScanState;

static Node *LookupScanCreateState(CustomScan *cscan);
static void LookupScanBegin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *LookupScanExec(CustomScanState *node);
static void LookupScanEnd(CustomScanState *node);
static void LookupScanRescan(CustomScanState *node);
static void LookupScanExplain(CustomScanState *node, List *ancestors, ExplainState *es);
static Plan *LookupScanPlan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods lookup_path_methods = {
	.CustomName = "NddMinhashLookup",
	.PlanCustomPath = LookupScanPlan,
};

static const CustomScanMethods lookup_scan_methods = {
	.CustomName = "NddMinhashLookup",
	.CreateCustomScanState = LookupScanCreateState,
};

static const CustomExecMethods lookup_exec_methods = {
	.CustomName = "NddMinhashLookup",
	.BeginCustomScan = LookupScanBegin,
	.ExecCustomScan = LookupScanExec,
	.EndCustomScan = LookupScanEnd,
	.ReScanCustomScan = LookupScanRescan,
	.ExplainCustomScan = LookupScanExplain,
};


/* ---------- planning ---------- */

/*
 * Is opfamily the minhash_ops of the ndd that defines operator opno?  (Any
 * GIN index comes here; nothing is looked up that may not exist.)
 */
static bool
IsMinHashOps(Oid opfamily, Oid opno)
{
	HeapTuple	tuple = SearchSysCache1(OPFAMILYOID, ObjectIdGetDatum(opfamily));
	Form_pg_opfamily form;
	bool		result;

	if (!HeapTupleIsValid(tuple))
		return false;
	form = (Form_pg_opfamily) GETSTRUCT(tuple);
	result = form->opfmethod == GIN_AM_OID &&
		strcmp(NameStr(form->opfname), "minhash_ops") == 0 &&
		form->opfnamespace == get_func_namespace(get_opcode(opno));
	ReleaseSysCache(tuple);
	return result;
}

/*
 * The `%` strategy of the index condition of a bitmap path over one
 * minhash_ops index column, or 0; *index, *column and *query are set.
 */
static int
LookupCondition(Path *path, IndexOptInfo **index, int *column, Expr **query)
{
	BitmapHeapPath *bitmap;
	IndexPath  *ipath;
	IndexClause *iclause;
	RestrictInfo *rinfo;
	OpExpr	   *op;
	int			strategy;

	/* 1. one index, one condition, no outer rows */
	if (!IsA(path, BitmapHeapPath) || path->param_info != NULL)
		return 0;
	bitmap = (BitmapHeapPath *) path;
	if (!IsA(bitmap->bitmapqual, IndexPath))
		return 0;
	ipath = (IndexPath *) bitmap->bitmapqual;
	if (ipath->indexinfo->relam != GIN_AM_OID || list_length(ipath->indexclauses) != 1)
		return 0;
	iclause = linitial_node(IndexClause, ipath->indexclauses);
	if (list_length(iclause->indexquals) != 1)
		return 0;
	rinfo = linitial_node(RestrictInfo, iclause->indexquals);
	if (!IsA(rinfo->clause, OpExpr))
		return 0;
	op = (OpExpr *) rinfo->clause;

	/* 2. a `%` of ndd's minhash_ops, the indexed column on its left */
	if (list_length(op->args) != 2 ||
		!IsMinHashOps(ipath->indexinfo->opfamily[iclause->indexcol], op->opno))
		return 0;
	strategy = get_op_opfamily_strategy(op->opno, ipath->indexinfo->opfamily[iclause->indexcol]);
	if (strategy != NDD_MINHASH_SIMILAR_STRATEGY && strategy != NDD_MINHASH_SIMILAR_QUERY_STRATEGY)
		return 0;

	*index = ipath->indexinfo;
	*column = iclause->indexcol + 1;
	*query = (Expr *) lsecond(op->args);
	return strategy;
}

/*
 * Does the query read a system column the scan's virtual slot cannot give?
 * (ctid and tableoid it sets.)
 */
static bool
NeedsOtherSystemColumns(RelOptInfo *rel)
{
	for (int attno = rel->min_attr; attno < 0; attno++)
		if (attno != SelfItemPointerAttributeNumber && attno != TableOidAttributeNumber &&
			!bms_is_empty(rel->attr_needed[attno - rel->min_attr]))
			return true;
	return false;
}

/* set_rel_pathlist_hook: offer the lookup scan beside GIN's bitmap scan. */
static void
LookupScanAddPath(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	List	   *found = NIL;
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);
	if (!ndd_lookup_scan || rte->rtekind != RTE_RELATION || rel->rtekind != RTE_RELATION ||
		NeedsOtherSystemColumns(rel))
		return;

	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);
		IndexOptInfo *index;
		int			column;
		Expr	   *query;
		int			strategy = LookupCondition(path, &index, &column, &query);
		CustomPath *cpath;

		if (strategy == 0)
			continue;
		cpath = makeNode(CustomPath);
		cpath->path.pathtype = T_CustomScan;
		cpath->flags = CUSTOMPATH_SUPPORT_PROJECTION;
		cpath->path.parent = rel;
		cpath->path.pathtarget = rel->reltarget;
		cpath->path.rows = path->rows;
		cpath->path.startup_cost = path->startup_cost * LOOKUP_COST_SHARE;
		cpath->path.total_cost = path->total_cost * LOOKUP_COST_SHARE;
#if PG_VERSION_NUM >= 180000
		/* 18 counts disabled nodes apart from the cost: disabled as GIN's scan */
		cpath->path.disabled_nodes = path->disabled_nodes;
#endif
		cpath->custom_private = list_make2(list_make3_oid(index->indexoid, column, strategy),
										   query);
		cpath->methods = &lookup_path_methods;
		found = lappend(found, cpath);
	}
	/* added after the loop: add_path may free the paths it beats */
	foreach(lc, found)
		add_path(rel, (Path *) lfirst(lc));
}

/* PlanCustomPath: every restriction stays a qual, checked on each fetched row. */
static Plan *
LookupScanPlan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = rel->relid;
	cscan->flags = best_path->flags;
	cscan->custom_exprs = list_make1(copyObject(lsecond(best_path->custom_private)));
	cscan->custom_private = list_make1(linitial(best_path->custom_private));
	cscan->methods = &lookup_scan_methods;
	return &cscan->scan.plan;
}

void
MinHashLookupScanInit(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = LookupScanAddPath;
}


/* ---------- execution ---------- */

static Node *
LookupScanCreateState(CustomScan *cscan)
{
	LookupScanState *s = palloc0(sizeof(LookupScanState));
	List	   *settings = linitial(cscan->custom_private);

	NodeSetTag(s, T_CustomScanState);
	s->css.methods = &lookup_exec_methods;
	s->index_oid = linitial_oid(settings);
	s->column = (int) lsecond_oid(settings);
	s->strategy = (int) lthird_oid(settings);
	return (Node *) s;
}

static void
LookupScanBegin(CustomScanState *node, EState *estate, int eflags)
{
	LookupScanState *s = (LookupScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;

	s->query = ExecInitExpr(linitial(cscan->custom_exprs), &node->ss.ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	s->index = index_open(s->index_oid, AccessShareLock);
	initGinState(&s->ginstate, s->index);
	s->fetch = table_index_fetch_begin(rel);
	s->fetched = table_slot_create(rel, NULL);
	s->scan_cxt = AllocSetContextCreate(estate->es_query_cxt, "ndd lookup scan",
										ALLOCSET_DEFAULT_SIZES);
}

static inline uint64
ItemNumber(ItemPointer item)
{
	return (uint64) ItemPointerGetBlockNumberNoCheck(item) << 16 |
		ItemPointerGetOffsetNumberNoCheck(item);
}

/* A cursor with an unread item, or none left: read on to its next page. */
static bool
CursorReady(LookupScanState *s, PostingCursor *c)
{
	while (!c->done && c->next >= c->nitems)
		PostingCursorNextPage(c, s->index);
	return !c->done;
}

/*
 * The query's keys and the count they demand, the cursors over their lists
 * (the pending list's hits first, read before the entry tree as GIN does).
 * No cursors when the query is NULL.  The sketch's keys are made even for
 * threshold 0, so that one made otherwise errs as in GIN's scan.
 */
static void
LookupStart(LookupScanState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	Snapshot	snapshot = s->css.ss.ps.state->es_snapshot;
	bool		isnull;
	Datum		value;
	MinHash    *mh;
	double		threshold = ndd_similarity_threshold;
	Datum	   *keys;
	int32		nkeys;
	int			bands,
				rows;

	s->started = true;
	/* counted as a scan of the index, as GIN's own */
	pgstat_count_index_scan(s->index);
	PredicateLockRelation(s->css.ss.ss_currentRelation, snapshot);

	/* 1. the query, as the index's extractQuery reads it */
	ResetExprContext(econtext);
	value = ExecEvalExprSwitchContext(s->query, econtext, &isnull);
	if (isnull)
		return;
	if (s->strategy == NDD_MINHASH_SIMILAR_STRATEGY)
		mh = (MinHash *) PG_DETOAST_DATUM(value);
	else if ((mh = MinHashFromQuery(DatumGetHeapTupleHeader(value), &threshold)) == NULL)
		return;

	/* 2. a threshold of 0 matches every row, as GIN's full-index search */
	keys = MinHashGinIndexKeys(s->index, s->column, mh, &nkeys, &bands, &rows);
	if (threshold <= 0.0)
	{
		s->all_rows = true;
		s->heap_scan = table_beginscan(s->css.ss.ss_currentRelation, snapshot, 0, NULL);
		return;
	}
	s->required = Max(LshRequiredBands(mh->num_perm, bands, rows, threshold), 1);

	/* 3. the cursors, each at its first unread item */
	qsort(keys, nkeys, sizeof(Datum), GinKeyCompare);
	s->cursors = palloc((nkeys + 1) * sizeof(PostingCursor));
	PostingCursorOpenPending(&s->cursors[0], s->index, &s->ginstate, s->column, keys, nkeys);
	for (int i = 0; i < nkeys; i++)
	{
		CHECK_FOR_INTERRUPTS();
		PostingCursorOpen(&s->cursors[i + 1], s->index, &s->ginstate, s->column, keys[i], snapshot);
	}
	s->ncursors = nkeys + 1;
	for (int i = 0; i < s->ncursors; i++)
		CursorReady(s, &s->cursors[i]);
}

/*
 * The postings of every list up to the last item of the page each has
 * read: whole, so the rows reaching the count among them are known.  The
 * window's upper bound is the smallest of those last items, so no list
 * needs another page; a window is at most a page of each list.
 */
static void CountWindow(LookupScanState *s, int n);

static void
ReadWindow(LookupScanState *s)
{
	ItemPointerData bound;
	int			n = 0;
	int			room = 0;

	ItemPointerSet(&bound, InvalidBlockNumber, MaxOffsetNumber);
	for (int i = 0; i < s->ncursors; i++)
		if (!s->cursors[i].done)
		{
			if (ItemPointerCompare(&s->cursors[i].last, &bound) < 0)
				bound = s->cursors[i].last;
			room += s->cursors[i].nitems - s->cursors[i].next;
		}
	if (room > s->window_size)
	{
		s->window_size = Max(room, 2 * s->window_size);
		if (s->window)
		{
			pfree(s->window);
			pfree(s->found);
		}
		s->window = palloc(s->window_size * sizeof(uint64));
		s->found = palloc(s->window_size * sizeof(uint64));
	}
	for (int i = 0; i < s->ncursors; i++)
	{
		PostingCursor *c = &s->cursors[i];

		while (!c->done && ItemPointerCompare(&c->items[c->next], &bound) <= 0)
		{
			s->window[n++] = ItemNumber(&c->items[c->next]);
			c->next++;
			CursorReady(s, c);
		}
	}
	CountWindow(s, n);
}

/*
 * The block counters for a window of n postings, grown (zeroed) when it is
 * larger than any before; they live as long as the node, across rescans.
 */
static uint8 *
BlockCounts(LookupScanState *s, int n)
{
	uint32		want = LOOKUP_MIN_CELLS;

	while (want < LOOKUP_MAX_CELLS && want < 2 * (uint32) n)
		want *= 2;
	if (want > s->block_cells)
	{
		if (s->block_counts)
			pfree(s->block_counts);
		s->block_counts = MemoryContextAllocZero(s->css.ss.ps.state->es_query_cxt, want);
		s->block_cells = want;
	}
	return s->block_counts;
}

/*
 * The rows of the window that hold `required` postings, in heap order:
 * postings counted per block first (cheap, in cache), and only those of
 * blocks that reach the count sorted and counted per row.
 */
static void
CountWindow(LookupScanState *s, int n)
{
	uint8	   *cells = BlockCounts(s, n);
	uint32		mask = s->block_cells - 1;
	int			kept = 0;

	for (int i = 0; i < n; i++)
	{
		uint8	   *cell = &cells[(s->window[i] >> 16) & mask];

		if (*cell < PG_UINT8_MAX)
			(*cell)++;
	}
	for (int i = 0; i < n; i++)
		if (cells[(s->window[i] >> 16) & mask] >= s->required)
			s->found[kept++] = s->window[i];
	/* the cells back to zero for the next window: only those touched */
	for (int i = 0; i < n; i++)
		cells[(s->window[i] >> 16) & mask] = 0;

	SortUint64(s->found, kept);
	s->nfound = s->next_found = 0;
	for (int i = 0; i < kept;)
	{
		int			run = i;

		while (run < kept && s->found[run] == s->found[i])
			run++;
		if (run - i >= s->required)
			s->found[s->nfound++] = s->found[i];
		i = run;
	}
}

/* The next row that holds `required` of the query's keys; false when none is left. */
static bool
NextCandidate(LookupScanState *s, ItemPointer tid)
{
	while (s->next_found >= s->nfound)
	{
		bool		more = false;

		for (int i = 0; i < s->ncursors && !more; i++)
			more = !s->cursors[i].done;
		if (!more)
			return false;
		CHECK_FOR_INTERRUPTS();
		ReadWindow(s);
	}
	ItemPointerSet(tid, (BlockNumber) (s->found[s->next_found] >> 16),
				   (OffsetNumber) (s->found[s->next_found] & 0xFFFF));
	s->next_found++;
	return true;
}

/* The scan slot filled with a copy of the fetched row, its ctid and table. */
static TupleTableSlot *
ReturnFetched(LookupScanState *s)
{
	TupleTableSlot *slot = s->css.ss.ss_ScanTupleSlot;

	ExecCopySlot(slot, s->fetched);
	slot->tts_tid = s->fetched->tts_tid;
	slot->tts_tableOid = RelationGetRelid(s->css.ss.ss_currentRelation);
	return slot;
}

/* ExecScan's access method: the next row the snapshot sees that reaches the count. */
static TupleTableSlot *
LookupNext(ScanState *node)
{
	LookupScanState *s = (LookupScanState *) node;
	Snapshot	snapshot = node->ps.state->es_snapshot;
	MemoryContext old = MemoryContextSwitchTo(s->scan_cxt);
	TupleTableSlot *result = NULL;
	ItemPointerData tid;

	if (!s->started)
		LookupStart(s);
	if (s->all_rows)
	{
		if (table_scan_getnextslot(s->heap_scan, ForwardScanDirection, s->fetched))
			result = ReturnFetched(s);
	}
	else
	{
		while (result == NULL && NextCandidate(s, &tid))
		{
			bool		call_again = false;
			bool		all_dead = false;

			/* an MVCC snapshot sees at most one member of a HOT chain */
			if (table_index_fetch_tuple(s->fetch, &tid, snapshot, s->fetched,
										&call_again, &all_dead))
				result = ReturnFetched(s);
		}
	}
	MemoryContextSwitchTo(old);
	return result ? result : ExecClearTuple(node->ss_ScanTupleSlot);
}

/* EvalPlanQual's recheck: the quals, checked by ExecScan, are the whole test. */
static bool
LookupRecheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
LookupScanExec(CustomScanState *node)
{
	return ExecScan(&node->ss, LookupNext, LookupRecheck);
}

/* Release what one scan holds. */
static void
LookupReset(LookupScanState *s)
{
	if (s->cursors)
		PostingCursorsClose(s->cursors, s->ncursors);
	if (s->heap_scan)
		table_endscan(s->heap_scan);
	MemoryContextReset(s->scan_cxt);
	s->cursors = NULL;
	s->window = s->found = NULL;
	s->window_size = s->nfound = s->next_found = 0;
	s->heap_scan = NULL;
	s->ncursors = 0;
	s->all_rows = false;
	s->started = false;
}

static void
LookupScanRescan(CustomScanState *node)
{
	LookupReset((LookupScanState *) node);
}

static void
LookupScanEnd(CustomScanState *node)
{
	LookupScanState *s = (LookupScanState *) node;

	if (s->index == NULL)
		return;					/* EXPLAIN without ANALYZE */
	LookupReset(s);
	ExecDropSingleTupleTableSlot(s->fetched);
	table_index_fetch_end(s->fetch);
	index_close(s->index, AccessShareLock);
}

static void
LookupScanExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	LookupScanState *s = (LookupScanState *) node;
	char	   *name = get_rel_name(s->index_oid);

	ExplainPropertyText("Index Name", name ? name : "?", es);
}
