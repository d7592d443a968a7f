/*
 * gin_postings.c
 *		Reading a GIN index's posting lists directly (see gin_postings.h):
 *		the entry tree's list or posting tree of one key, and the pending
 *		list's entries of a set of keys, each as a cursor over item
 *		pointers in heap order.  Used by top-k (minhash_topk.c) and the
 *		lookup scan (minhash_lookup_scan.c).
 */
#include "postgres.h"

#include "access/gin_private.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

#include "index/gin_postings.h"

static void
CursorSetItems(PostingCursor *c, ItemPointer items, int nitems)
{
	c->items = items;
	c->nitems = nitems;
	c->next = 0;
	if (nitems > 0)
		c->last = items[nitems - 1];
}

/*
 * Read the next leaf page of a posting tree, past the last item read: a
 * page split while the page was unlocked moved the rest to the right.
 * Items added since were added by transactions our snapshot cannot see.
 */
void
PostingCursorNextPage(PostingCursor *c, Relation index)
{
	if (c->items)
		pfree(c->items);
	CursorSetItems(c, NULL, 0);
	if (!BufferIsValid(c->buffer))
	{
		c->done = true;
		return;
	}
	LockBuffer(c->buffer, GIN_SHARE);
	for (;;)
	{
		Page		page = BufferGetPage(c->buffer);
		ItemPointer items;
		int			nitems;
		int			skip;

		if (GinPageRightMost(page))
		{
			UnlockReleaseBuffer(c->buffer);
			c->buffer = InvalidBuffer;
			c->done = true;
			return;
		}
		c->buffer = ginStepRight(c->buffer, index, GIN_SHARE);
		page = BufferGetPage(c->buffer);
		if (GinPageIsDeleted(page))
			continue;
		/* whole segments up to the last item read are skipped, not items */
		items = GinDataLeafPageGetItems(page, &nitems, c->last);
		skip = 0;
		while (skip < nitems && ItemPointerCompare(&items[skip], &c->last) <= 0)
			skip++;
		if (skip < nitems)
		{
			LockBuffer(c->buffer, GIN_UNLOCK);
			CursorSetItems(c, items, nitems);
			c->next = skip;
			return;
		}
		if (items)
			pfree(items);
	}
}

/*
 * The items on a posting tree's leaf page, counted without decoding them:
 * each item of a compressed segment but its first ends with a byte below
 * 0x80 (ginpostinglist.c's varbyte code).
 */
static int
LeafPageItemCount(Page page)
{
	GinPostingList *segment;
	char	   *end;
	int			n = 0;

	if (!GinPageIsCompressed(page))
		return GinPageGetOpaque(page)->maxoff;
	segment = GinDataLeafPageGetPostingList(page);
	end = (char *) segment + GinDataLeafPageGetPostingListSize(page);
	while ((char *) segment < end)
	{
		n++;
		for (int i = 0; i < segment->nbytes; i++)
			n += (segment->bytes[i] & 0x80) == 0;
		segment = GinNextPostingListSegment(segment);
	}
	return n;
}

/*
 * Find key in the entry tree: its posting list, or its posting tree's first
 * leaf.  With defer, a posting tree's first leaf is left pinned and counted,
 * not decoded: PostingCursorLoad decodes it, if the cursor is read at all.
 */
static void
CursorOpen(PostingCursor *c, Relation index, GinState *ginstate,
		   OffsetNumber attnum, Datum key, Snapshot snapshot, bool defer)
{
	GinBtreeData btree;
	GinBtreeStack *stack;
	bool		unlock = true;

	memset(c, 0, sizeof(*c));
	c->buffer = InvalidBuffer;
	c->done = true;
	ItemPointerSetMin(&c->last);

	ginPrepareEntryScan(&btree, attnum, key, GIN_CAT_NORM_KEY, ginstate);
#if PG_VERSION_NUM >= 170000
	/* 17 dropped the unused snapshot argument of GIN's tree descents */
	stack = ginFindLeafPage(&btree, true, false);
#else
	stack = ginFindLeafPage(&btree, true, false, snapshot);
#endif
	if (btree.findItem(&btree, stack))
	{
		Page		page = BufferGetPage(stack->buffer);
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, stack->off));

		if (GinIsPostingTree(itup))
		{
			BlockNumber root = GinGetPostingTree(itup);
			GinBtreeData data;
			GinBtreeStack *leaf;
			ItemPointer items;
			int			nitems;

			/* as GIN's scan: an entry never loses its posting tree */
			LockBuffer(stack->buffer, GIN_UNLOCK);
			unlock = false;
#if PG_VERSION_NUM >= 170000
			leaf = ginScanBeginPostingTree(&data, index, root);
#else
			leaf = ginScanBeginPostingTree(&data, index, root, snapshot);
#endif
			c->buffer = leaf->buffer;
			/* keep the leaf pinned after freeGinBtreeStack: vacuum waits */
			IncrBufferRefCount(c->buffer);
			if (defer)
			{
				items = NULL;
				nitems = LeafPageItemCount(BufferGetPage(c->buffer));
			}
			else
				items = GinDataLeafPageGetItems(BufferGetPage(c->buffer), &nitems, c->last);
			LockBuffer(c->buffer, GIN_UNLOCK);
			/* leaf pages, as the descent predicts them, of this one's items */
			c->estimate = (uint64) leaf->predictNumber * Max(nitems, 1);
			freeGinBtreeStack(leaf);
			c->done = false;
			if (defer)
				c->deferred = true;
			else
			{
				CursorSetItems(c, items, nitems);
				if (nitems == 0)
					PostingCursorNextPage(c, index);
			}
		}
		else if (GinGetNPosting(itup) > 0)
		{
			int			nitems;
			ItemPointer items = ginReadTuple(ginstate, attnum, itup, &nitems);

			c->estimate = nitems;
			c->done = false;
			CursorSetItems(c, items, nitems);
		}
	}
	if (unlock)
		LockBuffer(stack->buffer, GIN_UNLOCK);
	freeGinBtreeStack(stack);
}

/* Open a cursor on key's list, its first items read. */
void
PostingCursorOpen(PostingCursor *c, Relation index, GinState *ginstate,
				  OffsetNumber attnum, Datum key, Snapshot snapshot)
{
	CursorOpen(c, index, ginstate, attnum, key, snapshot, false);
}

/*
 * Open a cursor on key's list, with its estimate, leaving a posting tree's
 * first leaf undecoded: a list that is never read costs a descent only.
 * PostingCursorLoad before reading its items.
 */
void
PostingCursorOpenDeferred(PostingCursor *c, Relation index, GinState *ginstate,
						  OffsetNumber attnum, Datum key, Snapshot snapshot)
{
	CursorOpen(c, index, ginstate, attnum, key, snapshot, true);
}

/*
 * Decode a deferred cursor's first leaf.  The leaf stayed pinned, so it
 * was not deleted; items a split moved right since are read from there,
 * as PostingCursorNextPage goes on past the last item read.
 */
void
PostingCursorLoad(PostingCursor *c, Relation index)
{
	ItemPointer items;
	int			nitems;

	if (!c->deferred)
		return;
	c->deferred = false;
	LockBuffer(c->buffer, GIN_SHARE);
	items = GinDataLeafPageGetItems(BufferGetPage(c->buffer), &nitems, c->last);
	LockBuffer(c->buffer, GIN_UNLOCK);
	CursorSetItems(c, items, nitems);
	if (nitems == 0)
		PostingCursorNextPage(c, index);
}

int
GinKeyCompare(const void *a, const void *b)
{
	int32		x = DatumGetInt32(*(const Datum *) a);
	int32		y = DatumGetInt32(*(const Datum *) b);

	return (x > y) - (x < y);
}

static int
CompareItemPointers(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* Item pointers collected into an array that grows. */
typedef struct ItemList
{
	ItemPointer items;
	int			nitems;
	int			maxitems;
} ItemList;

static inline void
ItemListAppend(ItemList *list, ItemPointer item)
{
	if (list->nitems == list->maxitems)
	{
		list->maxitems = Max(list->maxitems * 2, 64);
		list->items = list->items ? repalloc(list->items, list->maxitems * sizeof(ItemPointerData))
			: palloc(list->maxitems * sizeof(ItemPointerData));
	}
	list->items[list->nitems++] = *item;
}

/* Add to hits the rows of a pending page's entries for one of the query's keys. */
static void
PendingPageHits(Page page, GinState *ginstate, OffsetNumber attnum,
				Datum *sorted_keys, int nkeys, ItemList *hits)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
		GinNullCategory category;
		Datum		key;

		if (gintuple_get_attrnum(ginstate, itup) != attnum)
			continue;
		key = gintuple_get_key(ginstate, itup, &category);
		if (category != GIN_CAT_NORM_KEY ||
			bsearch(&key, sorted_keys, nkeys, sizeof(Datum), GinKeyCompare) == NULL)
			continue;
		ItemListAppend(hits, &itup->t_tid);
	}
}

/* The pending list's first page, share-locked, or InvalidBuffer when the list is empty. */
static Buffer
PendingListHead(Relation index)
{
	Buffer		metabuffer = ReadBuffer(index, GIN_METAPAGE_BLKNO);
	Buffer		buffer;
	BlockNumber blkno;

	LockBuffer(metabuffer, GIN_SHARE);
	blkno = GinPageGetMeta(BufferGetPage(metabuffer))->head;
	if (blkno == InvalidBlockNumber)
	{
		UnlockReleaseBuffer(metabuffer);
		return InvalidBuffer;
	}
	buffer = ReadBuffer(index, blkno);
	LockBuffer(buffer, GIN_SHARE);
	UnlockReleaseBuffer(metabuffer);
	return buffer;
}

/*
 * The rows of the pending list (fastupdate) that hold one of the query's
 * keys, once per key, in heap order.  Read before the entry tree, as GIN's
 * scan does: a cleanup that runs meanwhile moves entries into the tree
 * before it deletes their pending pages, so none is missed.  An entry seen
 * in both places is counted twice, which only raises its bound.
 */
void
PostingCursorOpenPending(PostingCursor *c, Relation index, GinState *ginstate,
				  OffsetNumber attnum, Datum *sorted_keys, int nkeys)
{
	Buffer		buffer;
	ItemList	hits = {NULL, 0, 0};

	memset(c, 0, sizeof(*c));
	c->buffer = InvalidBuffer;
	c->done = true;

	buffer = PendingListHead(index);
	if (!BufferIsValid(buffer))
		return;
	for (;;)
	{
		Page		page = BufferGetPage(buffer);
		BlockNumber blkno;
		Buffer		next;

		CHECK_FOR_INTERRUPTS();
		/* a cleanup got here first: the rest is in the entry tree */
		if (GinPageIsDeleted(page))
			break;
		PendingPageHits(page, ginstate, attnum, sorted_keys, nkeys, &hits);
		blkno = GinPageGetOpaque(page)->rightlink;
		if (blkno == InvalidBlockNumber)
			break;
		next = ReadBuffer(index, blkno);
		LockBuffer(next, GIN_SHARE);
		UnlockReleaseBuffer(buffer);
		buffer = next;
	}
	UnlockReleaseBuffer(buffer);
	if (hits.nitems > 0)
	{
		qsort(hits.items, hits.nitems, sizeof(ItemPointerData), CompareItemPointers);
		c->done = false;
		CursorSetItems(c, hits.items, hits.nitems);
	}
	else if (hits.items)
		pfree(hits.items);
}

/* Unpin the leaves the cursors hold, and free them. */
void
PostingCursorsClose(PostingCursor *cursors, int ncursors)
{
	for (int i = 0; i < ncursors; i++)
		if (BufferIsValid(cursors[i].buffer))
			ReleaseBuffer(cursors[i].buffer);
	pfree(cursors);
}

