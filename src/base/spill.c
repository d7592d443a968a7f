/*
 * spill.c
 *		Partitioned fixed-width records in temporary files; see spill.h.
 *
 * A partition's file is made when its first record arrives, so partitions
 * that receive nothing cost nothing.  Records are written one at a time
 * through the BufFile's own block buffer and read back in large chunks.
 * A shared spill's reader opens a partition's files (one per writer, any
 * of them possibly missing) only when it reads that partition, so that a
 * few buffers are open at a time, and deletes them once read.
 */
#include "postgres.h"

#include <fcntl.h>

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "base/spill.h"

/* records read per chunk */
#define SPILL_CHUNK_RECORDS 4096

/*
 * Bytes a partition gathers before they go to its file, at most.  A record
 * goes to any of hundreds of partitions: written one by one, each would
 * touch a cold file buffer; gathered, a few cache lines a partition stay
 * warm and each file takes a run of records at once.
 */
#define SPILL_STAGE_BYTES	512

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
	BufFile   **files;			/* [part * nsources + source], NULL if none */
	bool	   *opened;			/* shared reader: the part's files are open */
	uint64	   *counts;
	uint64		total;
	int			stage_records;	/* per partition */
	char	   *stage;			/* [part * stage_records], made on first add */
	int		   *staged;			/* records in each part's stage */
};

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
	spill->files = palloc0((Size) nparts * nsources * sizeof(BufFile *));
	spill->counts = palloc0(nparts * sizeof(uint64));
	spill->stage_records = (int) Max(1, SPILL_STAGE_BYTES / width);
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

/* A writer's gathered records of one part into its file (made if need be). */
static void
FlushPart(Spill *spill, int part)
{
	if (spill->staged == NULL || spill->staged[part] == 0)
		return;
	if (spill->files[part] == NULL)
	{
		MemoryContext caller = MemoryContextSwitchTo(spill->context);

		spill->files[part] = spill->fileset ?
			BufFileCreateFileSet(&spill->fileset->fs, FileName(spill, 0, part)) :
			BufFileCreateTemp(false);
		MemoryContextSwitchTo(caller);
	}
	BufFileWrite(spill->files[part], spill->stage + (Size) part * spill->stage_records * spill->width,
				 (Size) spill->staged[part] * spill->width);
	spill->staged[part] = 0;
}

void
SpillAdd(Spill *spill, const void *record)
{
	int			part = spill->nparts == 1 ? 0 :
		spill->partition_of(record, spill->level, spill->nparts, spill->partition_arg);

	if (spill->stage == NULL)
	{
		/* the caller may add from a context reset after each row */
		spill->stage = MemoryContextAlloc(spill->context,
										  (Size) spill->nparts * spill->stage_records * spill->width);
		spill->staged = MemoryContextAllocZero(spill->context, spill->nparts * sizeof(int));
	}
	memcpy(spill->stage + ((Size) part * spill->stage_records + spill->staged[part]) * spill->width,
		   record, spill->width);
	if (++spill->staged[part] == spill->stage_records)
		FlushPart(spill, part);
	spill->counts[part]++;
	spill->total++;
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
		BufFile    *file = BufFileOpenFileSet(&spill->fileset->fs, FileName(spill, s, part),
											  O_RDONLY, true);

		spill->files[part * spill->nsources + s] = file;
		if (file != NULL)
			spill->counts[part] += (uint64) BufFileSize(file) / spill->width;
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
		FlushPart(spill, part);
	for (int i = 0; i < spill->nparts * spill->nsources; i++)
	{
		if (spill->files[i] != NULL)
			BufFileClose(spill->files[i]);
		spill->files[i] = NULL;
	}
}

/* Read n records of a file from its start into buf, or fail. */
static void
ReadRecords(Spill *spill, BufFile *file, char *buf, uint64 n)
{
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a temporary file of ndd: %m")));
	for (uint64 done = 0; done < n; done += SPILL_CHUNK_RECORDS * 16)
	{
		size_t		want = (size_t) (Min(n - done, SPILL_CHUNK_RECORDS * 16) * spill->width);

		/* in chunks, so that a cancel is seen while a large file is read */
		CHECK_FOR_INTERRUPTS();
		if (BufFileRead(file, buf + done * spill->width, want) != want)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from a temporary file of ndd: %m")));
	}
}

/* Records in one source file of a part. */
static uint64
FileRecords(Spill *spill, int part, int s)
{
	BufFile    *file = spill->files[part * spill->nsources + s];

	if (file == NULL)
		return 0;
	if (spill->nsources == 1 && spill->opened == NULL)
		return spill->counts[part];
	return (uint64) BufFileSize(file) / spill->width;
}

/* Close (and for a shared reader, delete) the part's files. */
static void
DropPart(Spill *spill, int part)
{
	for (int s = 0; s < spill->nsources; s++)
	{
		BufFile   **file = &spill->files[part * spill->nsources + s];

		if (*file == NULL)
			continue;
		BufFileClose(*file);
		*file = NULL;
		if (spill->opened)
			BufFileDeleteFileSet(&spill->fileset->fs, FileName(spill, s, part), true);
	}
	spill->counts[part] = 0;
}

char *
SpillTake(Spill *spill, int part, uint64 *nrecords)
{
	uint64		n = SpillRecords(spill, part);
	char	   *records = palloc_extended(Max(n, 1) * spill->width, MCXT_ALLOC_HUGE);
	uint64		done = 0;

	/* a private spill is read by its writer: what it gathered goes first */
	FlushPart(spill, part);

	for (int s = 0; s < spill->nsources; s++)
	{
		uint64		m = FileRecords(spill, part, s);

		if (m > 0)
			ReadRecords(spill, spill->files[part * spill->nsources + s],
						records + done * spill->width, m);
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
	FlushPart(spill, part);
	for (int s = 0; s < spill->nsources; s++)
	{
		BufFile    *file = spill->files[part * spill->nsources + s];
		uint64		n = FileRecords(spill, part, s);

		if (n > 0 && BufFileSeek(file, 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not seek in a temporary file of ndd: %m")));
		for (uint64 done = 0; done < n; done += SPILL_CHUNK_RECORDS)
		{
			uint64		m = Min(n - done, SPILL_CHUNK_RECORDS);

			CHECK_FOR_INTERRUPTS();
			if (BufFileRead(file, chunk, m * spill->width) != m * spill->width)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read from a temporary file of ndd: %m")));
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
	if (spill->stage)
	{
		pfree(spill->stage);
		pfree(spill->staged);
	}
	pfree(spill);
}

int
SpillMaxPartitions(Size budget)
{
	return (int) Max(1, Min(budget / 4 / (BLCKSZ + SPILL_STAGE_BYTES), 4096));
}
