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

/* Every qualifying pair into out, as near_duplicate_pairs returns them; their count. */
extern uint64 CitusPairsRun(const CitusPairs *c, Tuplestorestate *out, TupleDesc out_desc);

/* Every qualifying pair (id_a, id_b) into into, a distributed table of columns (u, v); their count. */
extern uint64 CitusPairsInto(const CitusPairs *c, const char *into);

#endif							/* NDD_PAIRS_CITUS_H */
