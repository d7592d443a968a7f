/*
 * gin_postings.h
 *		Reading a GIN index's posting lists directly, a leaf page at a time,
 *		for scans that count keys per row instead of asking GIN's scan.
 */
#ifndef NDD_GIN_POSTINGS_H
#define NDD_GIN_POSTINGS_H

#include "access/gin_private.h"
#include "utils/snapshot.h"

/* One of the query's posting lists, read a leaf page at a time. */
typedef struct PostingCursor
{
	Buffer		buffer;			/* pinned leaf of a posting tree, or invalid */
	ItemPointer items;			/* the items read and not yet counted */
	int			nitems;
	int			next;
	ItemPointerData last;		/* the last item of the page read */
	bool		done;
	bool		deferred;		/* buffer's items not read yet (PostingCursorLoad) */
	uint64		estimate;		/* of the list's length */
} PostingCursor;

extern int	GinKeyCompare(const void *a, const void *b);
extern void PostingCursorOpen(PostingCursor *c, Relation index, GinState *ginstate,
							  OffsetNumber attnum, Datum key, Snapshot snapshot);
extern void PostingCursorOpenDeferred(PostingCursor *c, Relation index, GinState *ginstate,
									  OffsetNumber attnum, Datum key, Snapshot snapshot);
extern void PostingCursorLoad(PostingCursor *c, Relation index);
extern void PostingCursorOpenPending(PostingCursor *c, Relation index, GinState *ginstate,
									 OffsetNumber attnum, Datum *sorted_keys, int nkeys);
extern void PostingCursorNextPage(PostingCursor *c, Relation index);
extern void PostingCursorsClose(PostingCursor *cursors, int ncursors);

#endif							/* NDD_GIN_POSTINGS_H */
