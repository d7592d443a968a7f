/*
 * pairs_citus.h
 *		near_duplicate_pairs on a table Citus distributes by hash: a
 *		map-reduce of statements that Citus plans and runs on its workers.
 */
#ifndef NDD_PAIRS_CITUS_H
#define NDD_PAIRS_CITUS_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "utils/tuplestore.h"

#include "sqlgen/sketch_sql.h"

/* what pairs.c knows of the call, the names as the caller gave them */
typedef struct CitusPairs
{
	Oid			relid;
	const char *tbl;			/* the table as regclass shows it */
	const char *id_name;
	const char *sketch_name;
	const char *verify_name;	/* NULL without verification */
	SketchKind	kind;
	const SketchRule *rule;		/* its keys planned */
	double		threshold;		/* verification's */
	int32		shingle_size;	/* verification's shingling */
	const char *unit;

	/* a NOTICE with the time so far; NULL: no progress */
	void		(*progress) (void *arg, const char *message);
	void	   *arg;
} CitusPairs;

/* Is relid a table that Citus distributes by hash?  False where Citus is not installed. */
extern bool CitusHashDistributed(Oid relid);

/* Every qualifying pair into out, as near_duplicate_pairs returns them; their count. */
extern uint64 CitusPairsRun(const CitusPairs *c, Tuplestorestate *out, TupleDesc out_desc);

#endif							/* NDD_PAIRS_CITUS_H */
