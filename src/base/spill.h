/*
 * spill.h
 *		Fixed-width records spread over partitions kept in temporary files:
 *		how a pass over millions of rows groups what it found without holding
 *		it in memory.  Each partition is read back whole when it fits the
 *		caller's budget, or split again into smaller ones when it does not.
 *
 * The files are PostgreSQL's BufFiles: their buffers are a block each,
 * they count against temp_file_limit, and they are deleted at the end of
 * the transaction whether it commits or fails.
 */
#ifndef NDD_SPILL_H
#define NDD_SPILL_H

typedef struct Spill Spill;

/* which partition, of nparts, a record goes to; level counts re-splits */
typedef int (*SpillPartitionOf) (const void *record, int level, int nparts);

extern Spill *SpillCreate(int nparts, Size width, SpillPartitionOf partition_of, int level);
extern int	SpillPartitions(const Spill *spill);
extern void SpillAdd(Spill *spill, const void *record);
extern uint64 SpillRecords(const Spill *spill, int part);
extern uint64 SpillTotal(const Spill *spill);

/* Partition part's records, in one palloc'd array; its file is closed. */
extern char *SpillTake(Spill *spill, int part, uint64 *nrecords);

/* Partition part's records split again into nparts; its file is closed. */
extern Spill *SpillSplit(Spill *spill, int part, int nparts);

extern void SpillEnd(Spill *spill);

/* partitions whose file buffers take at most a quarter of budget bytes */
extern int	SpillMaxPartitions(Size budget);

#endif							/* NDD_SPILL_H */
