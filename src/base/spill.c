/*
 * spill.c
 *		Partitioned fixed-width records in temporary files; see spill.h.
 *
 * A partition's file is made when its first record arrives, so partitions
 * that receive nothing cost nothing.  Each partition gathers its records
 * in a cache line of its own, streamed when full into a buffer of its own,
 * a share of a quarter of work_mem (at least a block, at most
 * SPILL_MAX_BUFFER), written to its file in one call when full; a
 * partition is read back with as few calls, straight into the caller's
 * array.  A BufFile, which this used before, copies every byte
 * through its own block buffer and makes a call per 8 kB block each way:
 * at 10M rows that copy was 7% of the engine's time, and the calls and
 * page-cache lookups much of the kernel's third.  fd.c's temporary files
 * keep what BufFile gave: temp_file_limit, temp_tablespaces, the file
 * count and log_temp_files, and deletion at the end of the transaction.
 * A shared spill's reader opens a partition's files (one per writer, any
 * of them possibly missing) only when it reads that partition, and
 * deletes them once read.
 */
#include "postgres.h"

#include <fcntl.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "commands/tablespace.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "base/spill.h"

/* records read per chunk by SpillScan */
#define SPILL_CHUNK_RECORDS 4096

/* bytes read per call by SpillTake, between checks for cancel */
#define SPILL_READ_BYTES	(8 * 1024 * 1024)

/*
 * A partition's write buffer, at most: past a few dozen pages a call, a
 * larger one saves no more calls worth the memory.
 */
#define SPILL_MAX_BUFFER	(128 * 1024)

/*
 * Records go first into a line of their partition (a cache line: all the
 * partitions' lines stay in cache), and a full line into the partition's
 * buffer with streaming stores.  Written one record at a time, each new
 * line of a buffer was a cache miss, the buffers being larger than the
 * cache together: that store was most of SpillAddTo's time, a sixth of
 * the engine's at 3M rows.
 */
#define SPILL_LINE			64

struct Spill
{
	int			nparts;
	int			nsources;		/* files per partition: writers read as one */
	Size		width;
	SpillPartitionOf partition_of;
	const void *partition_arg;
	int			level;
	MemoryContext context;		/* where the files live, made with the spill */
	SharedFileSet *fileset;		/* NULL: private temporary files */
	char	  **names;			/* shared: each source's name */
	File	   *files;			/* [part * nsources + source], 0 if none */
	bool	   *opened;			/* shared reader: the part's files are open */
	uint64	   *counts;
	uint64		total;
	off_t	   *written;		/* writer: bytes in each part's file */
	int			buffer_bytes;	/* per partition: a whole number of lines */
	char	  **buffers;		/* writer: each part's, made on its first line */
	char	  **buffer_mem;		/* as allocated, before alignment to a line */
	int		   *buffered;		/* bytes in each part's buffer */
	char	   *stages;			/* writer: a line of each part, aligned */
	char	   *stage_mem;
	uint8	   *staged;			/* bytes in each part's line */
};

/*
 * Bytes a partition's buffer holds: its share of a quarter of work_mem,
 * as SpillMaxPartitions counts it, in whole lines.
 */
static int
BufferBytes(int nparts)
{
	Size		bytes = (Size) work_mem * 1024 / 4 / nparts;

	bytes = Max(Min(bytes, SPILL_MAX_BUFFER), BLCKSZ);
	return (int) (bytes / SPILL_LINE * SPILL_LINE);
}

static Spill *
NewSpill(int nparts, int nsources, Size width, SpillPartitionOf partition_of,
		 const void *partition_arg, int level)
{
	Spill	   *spill = palloc0(sizeof(Spill));

	Assert(nparts >= 1 && nsources >= 1 && width > 0);
	spill->nparts = nparts;
	spill->nsources = nsources;
	spill->width = width;
	spill->partition_of = partition_of;
	spill->partition_arg = partition_arg;
	spill->level = level;
	spill->context = CurrentMemoryContext;
	/* fd.c never hands out File 0: it marks a file not made or missing */
	spill->files = palloc0((Size) nparts * nsources * sizeof(File));
	spill->counts = palloc0(nparts * sizeof(uint64));
	spill->buffer_bytes = BufferBytes(nparts);
	return spill;
}

Spill *
SpillCreate(int nparts, Size width, SpillPartitionOf partition_of, const void *partition_arg,
			int level)
{
	return NewSpill(nparts, 1, width, partition_of, partition_arg, level);
}

Spill *
SpillCreateShared(SharedFileSet *fileset, const char *name, int nparts, Size width,
				  SpillPartitionOf partition_of, const void *partition_arg)
{
	Spill	   *spill = NewSpill(nparts, 1, width, partition_of, partition_arg, 0);

	spill->fileset = fileset;
	spill->names = palloc(sizeof(char *));
	spill->names[0] = pstrdup(name);
	return spill;
}

Spill *
SpillOpenShared(SharedFileSet *fileset, char **names, int nnames, int nparts, Size width,
				SpillPartitionOf partition_of, const void *partition_arg)
{
	Spill	   *spill = NewSpill(nparts, nnames, width, partition_of, partition_arg, 0);

	spill->fileset = fileset;
	spill->names = names;
	spill->opened = palloc0(nparts * sizeof(bool));
	return spill;
}

static char *
FileName(const Spill *spill, int source, int part)
{
	return psprintf("%s.%d", spill->names[source], part);
}

int
SpillPartitions(const Spill *spill)
{
	return spill->nparts;
}

/* Write bytes at offset of a temporary file, or fail (a short write: the disk is full). */
static void
WriteBytes(File file, char *bytes, Size n, off_t offset)
{
	/* a buffer is at most SPILL_MAX_BUFFER: PostgreSQL 15's FileWrite takes an int */
	if (FileWrite(file, bytes, (int) n, offset, WAIT_EVENT_BUFFILE_WRITE) != (int) n)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write to a temporary file of ndd: %m")));
}

/* Read n bytes at offset of a temporary file into buf, or fail. */
static void
ReadBytes(File file, char *buf, Size n, off_t offset)
{
	Size		done = 0;

	while (done < n)
	{
		int			want = (int) Min(n - done, SPILL_READ_BYTES);
		int			got;

		/* in chunks, so that a cancel is seen while a large file is read */
		CHECK_FOR_INTERRUPTS();
		got = (int) FileRead(file, buf + done, want, offset + (off_t) done, WAIT_EVENT_BUFFILE_READ);
		if (got <= 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from a temporary file of ndd: %m")));
		done += got;
	}
}

/* Memory of bytes aligned to a line, in the spill's context: *mem to free. */
static char *
AllocLines(Spill *spill, Size bytes, char **mem)
{
	*mem = MemoryContextAlloc(spill->context, bytes + SPILL_LINE);
	return (char *) TYPEALIGN(SPILL_LINE, *mem);
}

/* A part's line into its buffer at once, without reading the buffer's line first. */
static pg_attribute_always_inline void
StoreLine(char *dst, const char *line)
{
#ifdef __SSE2__
	/* a whole line streamed past the cache: no read for ownership */
	if (((uintptr_t) dst & 15) == 0)
	{
		for (int i = 0; i < SPILL_LINE / 16; i++)
			_mm_stream_si128((__m128i *) dst + i, _mm_load_si128((const __m128i *) line + i));
		return;
	}
#endif
	memcpy(dst, line, SPILL_LINE);
}

/* Room in a part's buffer: made on first use. */
static char *
PartBuffer(Spill *spill, int part)
{
	if (spill->buffers[part] == NULL)
		spill->buffers[part] = AllocLines(spill, spill->buffer_bytes, &spill->buffer_mem[part]);
	return spill->buffers[part] + spill->buffered[part];
}

/* A writer's buffered records of one part, its line's last, into its file (made if need be). */
static void
FlushPart(Spill *spill, int part)
{
	Size		bytes;

	if (spill->buffered == NULL)
		return;
	if (spill->staged[part] > 0)
	{
		/* the buffer has room: it is written whenever a line fills it */
		memcpy(PartBuffer(spill, part), spill->stages + part * SPILL_LINE, spill->staged[part]);
		spill->buffered[part] += spill->staged[part];
		spill->staged[part] = 0;
	}
	if (spill->buffered[part] == 0)
		return;
#ifdef __SSE2__
	/* the streamed lines are in memory before the kernel reads them */
	_mm_sfence();
#endif
	if (spill->files[part] <= 0)
	{
		MemoryContext caller = MemoryContextSwitchTo(spill->context);

		if (spill->fileset)
			spill->files[part] = FileSetCreate(&spill->fileset->fs, FileName(spill, 0, part));
		else
		{
			/* as BufFileCreateTemp: in temp_tablespaces, deleted when closed */
			PrepareTempTablespaces();
			spill->files[part] = OpenTemporaryFile(false);
		}
		MemoryContextSwitchTo(caller);
	}
	bytes = (Size) spill->buffered[part];
	WriteBytes(spill->files[part], spill->buffers[part], bytes, spill->written[part]);
	spill->written[part] += bytes;
	spill->buffered[part] = 0;
}

/*
 * A record into a buffer.  memcpy of a width known only at run time is a
 * call for each record: at 3M rows that call was 8% of the engine's
 * samples; for the widths the engine spills it becomes a few moves.
 */
static inline void
CopyRecord(char *dst, const void *record, Size width)
{
	switch (width)
	{
		case 8:
			memcpy(dst, record, 8);
			break;
		case 12:
			memcpy(dst, record, 12);
			break;
		case 16:
			memcpy(dst, record, 16);
			break;
		case 36:
			memcpy(dst, record, 36);
			break;
		case 40:
			memcpy(dst, record, 40);
			break;
		case 48:
			memcpy(dst, record, 48);
			break;
		default:
			memcpy(dst, record, width);
	}
}

void
SpillAdd(Spill *spill, const void *record)
{
	SpillAddTo(spill, spill->nparts == 1 ? 0 :
			   spill->partition_of(record, spill->level, spill->nparts, spill->partition_arg),
			   record);
}

/* The writer's arrays, on the first add (the caller may add from a context reset after each row). */
static void
StartWriting(Spill *spill)
{
	spill->buffers = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(char *));
	spill->buffer_mem = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(char *));
	spill->buffered = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(int));
	spill->written = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(off_t));
	spill->stages = AllocLines(spill, (Size) spill->nparts * SPILL_LINE, &spill->stage_mem);
	spill->staged = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(uint8));
}

/*
 * A record that reaches the end of its part's line: as much as fits, the
 * full line into the buffer (the buffer into the file when full), the rest
 * into the line again.
 */
static pg_noinline void
AddAcrossLine(Spill *spill, int part, const char *record)
{
	char	   *line = spill->stages + part * SPILL_LINE;
	Size		left = spill->width;
	int			at = spill->staged[part];

	while (left > 0)
	{
		Size		n = Min(left, (Size) (SPILL_LINE - at));

		memcpy(line + at, record, n);
		at += n;
		record += n;
		left -= n;
		if (at < SPILL_LINE)
			break;
		StoreLine(PartBuffer(spill, part), line);
		at = 0;
		spill->staged[part] = 0;
		spill->buffered[part] += SPILL_LINE;
		if (spill->buffered[part] == spill->buffer_bytes)
			FlushPart(spill, part);
	}
	spill->staged[part] = at;
}

void
SpillAddTo(Spill *spill, int part, const void *record)
{
	int			at;

	Assert(part >= 0 && part < spill->nparts);
	if (unlikely(spill->buffers == NULL))
		StartWriting(spill);
	at = spill->staged[part];
	if (likely(at + spill->width < SPILL_LINE))
	{
		CopyRecord(spill->stages + part * SPILL_LINE + at, record, spill->width);
		spill->staged[part] = at + spill->width;
	}
	else
		AddAcrossLine(spill, part, record);
	spill->counts[part]++;
	spill->total++;
}

/* A writer's buffer of one part, flushed and given back. */
static void
FreeBuffer(Spill *spill, int part)
{
	if (spill->buffers == NULL)
		return;
	FlushPart(spill, part);
	if (spill->buffers[part] == NULL)
		return;
	pfree(spill->buffer_mem[part]);
	spill->buffers[part] = NULL;
}

/* A shared reader: open the part's files, and count their records. */
static void
OpenPart(Spill *spill, int part)
{
	MemoryContext caller;

	if (spill->opened == NULL || spill->opened[part])
		return;
	caller = MemoryContextSwitchTo(spill->context);
	for (int s = 0; s < spill->nsources; s++)
	{
		File		file = FileSetOpen(&spill->fileset->fs, FileName(spill, s, part),
									   O_RDONLY | PG_BINARY);

		/* a writer that wrote nothing to the part made no file */
		if (file <= 0)
			continue;
		spill->files[part * spill->nsources + s] = file;
		spill->counts[part] += (uint64) FileSize(file) / spill->width;
	}
	MemoryContextSwitchTo(caller);
	spill->opened[part] = true;
}

uint64
SpillRecords(Spill *spill, int part)
{
	OpenPart(spill, part);
	return spill->counts[part];
}

uint64
SpillTotal(const Spill *spill)
{
	return spill->total;
}

void
SpillEndWriting(Spill *spill)
{
	for (int part = 0; part < spill->nparts; part++)
		FreeBuffer(spill, part);
	for (int i = 0; i < spill->nparts * spill->nsources; i++)
	{
		if (spill->files[i] > 0)
			FileClose(spill->files[i]);
		spill->files[i] = 0;
	}
}

/* Records in one source file of a part. */
static uint64
FileRecords(Spill *spill, int part, int s)
{
	File		file = spill->files[part * spill->nsources + s];

	if (file <= 0)
		return 0;
	if (spill->opened == NULL)
		return spill->counts[part];
	return (uint64) FileSize(file) / spill->width;
}

/* Close (and for a shared reader, delete) the part's files. */
static void
DropPart(Spill *spill, int part)
{
	for (int s = 0; s < spill->nsources; s++)
	{
		File	   *file = &spill->files[part * spill->nsources + s];

		if (*file <= 0)
			continue;
		/* a private file is deleted as it is closed */
		FileClose(*file);
		*file = 0;
		if (spill->opened)
			FileSetDelete(&spill->fileset->fs, FileName(spill, s, part), true);
	}
	spill->counts[part] = 0;
}

char *
SpillTake(Spill *spill, int part, uint64 *nrecords)
{
	uint64		n = SpillRecords(spill, part);
	char	   *records = palloc_extended(Max(n, 1) * spill->width, MCXT_ALLOC_HUGE);
	uint64		done = 0;

	/* a private spill is read by its writer: what it buffered goes first */
	FreeBuffer(spill, part);
	for (int s = 0; s < spill->nsources; s++)
	{
		uint64		m = FileRecords(spill, part, s);

		if (m > 0)
			ReadBytes(spill->files[part * spill->nsources + s], records + done * spill->width,
					  (Size) m * spill->width, 0);
		done += m;
	}
	DropPart(spill, part);
	*nrecords = done;
	return records;
}

void
SpillScan(Spill *spill, int part, void (*visit) (void *arg, const void *record), void *arg)
{
	char	   *chunk = palloc(SPILL_CHUNK_RECORDS * spill->width);

	(void) SpillRecords(spill, part);
	FreeBuffer(spill, part);
	for (int s = 0; s < spill->nsources; s++)
	{
		File		file = spill->files[part * spill->nsources + s];
		uint64		n = FileRecords(spill, part, s);

		for (uint64 done = 0; done < n; done += SPILL_CHUNK_RECORDS)
		{
			uint64		m = Min(n - done, SPILL_CHUNK_RECORDS);

			ReadBytes(file, chunk, (Size) m * spill->width, (off_t) (done * spill->width));
			for (uint64 i = 0; i < m; i++)
				visit(arg, chunk + i * spill->width);
		}
	}
	pfree(chunk);
}

void
SpillForEach(Spill *spill, int part, void (*visit) (void *arg, const void *record), void *arg)
{
	SpillScan(spill, part, visit, arg);
	DropPart(spill, part);
}

static void
AddTo(void *arg, const void *record)
{
	SpillAdd((Spill *) arg, record);
}

Spill *
SpillSplit(Spill *spill, int part, int nparts)
{
	Spill	   *split = SpillCreate(nparts, spill->width, spill->partition_of, spill->partition_arg,
								spill->level + 1);

	SpillForEach(spill, part, AddTo, split);
	return split;
}

void
SpillEnd(Spill *spill)
{
	if (spill->opened == NULL)
		SpillEndWriting(spill);
	else
		for (int part = 0; part < spill->nparts; part++)
			DropPart(spill, part);
	pfree(spill->files);
	pfree(spill->counts);
	if (spill->buffers)
	{
		pfree(spill->buffers);
		pfree(spill->buffer_mem);
		pfree(spill->buffered);
		pfree(spill->written);
		pfree(spill->stage_mem);
		pfree(spill->staged);
	}
	pfree(spill);
}

int
SpillMaxPartitions(Size budget)
{
	return (int) Max(1, Min(budget / 4 / BLCKSZ, 4096));
}
