/*
 * toast_read.c
 *		Reading a value stored out of line so that query cancel is honoured.
 *
 * PostgreSQL fetches an out-of-line value whole (detoast_attr), all its
 * chunks in one loop that looks at no interrupt: a 100 MB document stored
 * uncompressed is 50,000 chunks, a few hundred milliseconds deaf to cancel
 * on a loaded machine.  Here the chunks come through the table access
 * method's slice fetch, a slice at a time with a look at interrupts
 * between.  Decompressing a value stored compressed is still one call
 * (PostgreSQL's codecs cannot stop and resume), and pglz is the slower
 * part: about 0.15 s for 35 MB of passage on a loaded machine, where its
 * 13 MB of chunks took 0.03 s.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "miscadmin.h"

#include "base/toast_read.h"

/*
 * Bytes fetched between two looks at interrupts: a whole number of heap
 * TOAST chunks (no chunk is read twice), about 1 MB, a few milliseconds.
 */
#define TOAST_READ_SLICE	(512 * TOAST_MAX_CHUNK_SIZE)

struct varlena *
ToastFetchCancellable(struct varlena *value)
{
	struct varatt_external pointer;
	int32		size;
	struct varlena *result;
	struct varlena *slice;
	Relation	toastrel;

	if (!VARATT_IS_EXTERNAL_ONDISK(value))
		return value;
	VARATT_EXTERNAL_GET_POINTER(pointer, value);
	size = VARATT_EXTERNAL_GET_EXTSIZE(pointer);
	if (size <= TOAST_READ_SLICE)
		return detoast_external_attr(value);

	/* as detoast_external_attr() makes it, slice by slice */
	result = (struct varlena *) palloc(size + VARHDRSZ);
	if (VARATT_EXTERNAL_IS_COMPRESSED(pointer))
		SET_VARSIZE_COMPRESSED(result, size + VARHDRSZ);
	else
		SET_VARSIZE(result, size + VARHDRSZ);
	slice = (struct varlena *) palloc(TOAST_READ_SLICE + VARHDRSZ);
	SET_VARSIZE(slice, TOAST_READ_SLICE + VARHDRSZ);
	toastrel = table_open(pointer.va_toastrelid, AccessShareLock);
	for (int32 offset = 0; offset < size; offset += TOAST_READ_SLICE)
	{
		int32		length = Min(TOAST_READ_SLICE, size - offset);

		CHECK_FOR_INTERRUPTS();
		table_relation_fetch_toast_slice(toastrel, pointer.va_valueid, size,
										 offset, length, slice);
		memcpy(VARDATA(result) + offset, VARDATA(slice), length);
	}
	table_close(toastrel, AccessShareLock);
	pfree(slice);
	return result;
}

/* The fetched copy of value, decompressed as detoast_attr() does if asked. */
static struct varlena *
Decompress(struct varlena *value, struct varlena *fetched, bool packed)
{
	struct varlena *result;

	if (packed ? !(VARATT_IS_COMPRESSED(fetched) || VARATT_IS_EXTERNAL(fetched))
		: !VARATT_IS_EXTENDED(fetched))
		return fetched;
	result = detoast_attr(fetched);
	/* the compressed copy is ours: do not keep both */
	if (fetched != value && result != fetched)
		pfree(fetched);
	return result;
}

struct varlena *
DetoastPackedCancellable(struct varlena *value)
{
	return Decompress(value, ToastFetchCancellable(value), true);
}

struct varlena *
DetoastCancellable(struct varlena *value)
{
	return Decompress(value, ToastFetchCancellable(value), false);
}
