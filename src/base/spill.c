/*
 * spill.c
 *		Partitioned fixed-width records in temporary files; see spill.h.
 *
 * A partition's file is made when its first record arrives, so partitions
 * that receive nothing cost nothing.  Records are written one at a time
 * through the BufFile's own block buffer and read back in large chunks.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "base/spill.h"

/* records read per chunk when a partition is split again */
#define SPILL_CHUNK_RECORDS 4096

struct Spill
{
	int			nparts;
	Size		width;
	SpillPartitionOf partition_of;
	int			level;
	MemoryContext context;		/* where the files live, made with the spill */
	BufFile   **files;			/* NULL until a record arrives */
	uint64	   *counts;
	uint64		total;
};

Spill *
SpillCreate(int nparts, Size width, SpillPartitionOf partition_of, int level)
{
	Spill	   *spill = palloc0(sizeof(Spill));

	Assert(nparts >= 1 && width > 0);
	spill->nparts = nparts;
	spill->width = width;
	spill->partition_of = partition_of;
	spill->level = level;
	spill->context = CurrentMemoryContext;
	spill->files = palloc0(nparts * sizeof(BufFile *));
	spill->counts = palloc0(nparts * sizeof(uint64));
	return spill;
}

int
SpillPartitions(const Spill *spill)
{
	return spill->nparts;
}

void
SpillAdd(Spill *spill, const void *record)
{
	int			part = spill->nparts == 1 ? 0 :
		spill->partition_of(record, spill->level, spill->nparts);

	if (spill->files[part] == NULL)
	{
		/* the caller may add from a context reset after each row */
		MemoryContext caller = MemoryContextSwitchTo(spill->context);

		spill->files[part] = BufFileCreateTemp(false);
		MemoryContextSwitchTo(caller);
	}
	/* PostgreSQL 15 declares the buffer without const */
	BufFileWrite(spill->files[part], unconstify(void *, record), spill->width);
	spill->counts[part]++;
	spill->total++;
}

uint64
SpillRecords(const Spill *spill, int part)
{
	return spill->counts[part];
}

uint64
SpillTotal(const Spill *spill)
{
	return spill->total;
}

/* Read n records of the partition's file into buf, or fail. */
static void
ReadExactly(Spill *spill, int part, char *buf, uint64 n)
{
	size_t		want = (size_t) (n * spill->width);

	if (BufFileRead(spill->files[part], buf, want) != want)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read from a temporary file of ndd: %m")));
}

/* Start reading the partition from its first record. */
static void
Rewind(Spill *spill, int part)
{
	if (BufFileSeek(spill->files[part], 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a temporary file of ndd: %m")));
}

static void
ClosePartition(Spill *spill, int part)
{
	if (spill->files[part] != NULL)
		BufFileClose(spill->files[part]);
	spill->files[part] = NULL;
	spill->counts[part] = 0;
}

char *
SpillTake(Spill *spill, int part, uint64 *nrecords)
{
	uint64		n = spill->counts[part];
	char	   *records = palloc_extended(Max(n, 1) * spill->width, MCXT_ALLOC_HUGE);

	if (n > 0)
	{
		Rewind(spill, part);
		/* in chunks, so that a cancel is seen while a large file is read */
		for (uint64 done = 0; done < n; done += SPILL_CHUNK_RECORDS * 16)
		{
			CHECK_FOR_INTERRUPTS();
			ReadExactly(spill, part, records + done * spill->width,
						Min(n - done, SPILL_CHUNK_RECORDS * 16));
		}
	}
	ClosePartition(spill, part);
	*nrecords = n;
	return records;
}

Spill *
SpillSplit(Spill *spill, int part, int nparts)
{
	Spill	   *split = SpillCreate(nparts, spill->width, spill->partition_of, spill->level + 1);
	uint64		n = spill->counts[part];
	char	   *chunk = palloc(SPILL_CHUNK_RECORDS * spill->width);

	if (n > 0)
		Rewind(spill, part);
	for (uint64 done = 0; done < n; done += SPILL_CHUNK_RECORDS)
	{
		uint64		m = Min(n - done, SPILL_CHUNK_RECORDS);

		CHECK_FOR_INTERRUPTS();
		ReadExactly(spill, part, chunk, m);
		for (uint64 i = 0; i < m; i++)
			SpillAdd(split, chunk + i * spill->width);
	}
	pfree(chunk);
	ClosePartition(spill, part);
	return split;
}

void
SpillEnd(Spill *spill)
{
	for (int part = 0; part < spill->nparts; part++)
		ClosePartition(spill, part);
	pfree(spill->files);
	pfree(spill->counts);
	pfree(spill);
}

int
SpillMaxPartitions(Size budget)
{
	return (int) Max(1, Min(budget / 4 / BLCKSZ, 4096));
}
