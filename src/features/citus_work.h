/*
 * citus_work.h
 *		The work tables of ndd's map-reduce on Citus (pairs_citus.c,
 *		clusters_citus.c): distributed tables of one call, in the table's
 *		schema, named at random, dropped at its end.
 */
#ifndef NDD_CITUS_WORK_H
#define NDD_CITUS_WORK_H

#include "postgres.h"

#include "nodes/pg_list.h"

typedef struct CitusWork
{
	Oid			relid;			/* the user's table */
	const char *schema;			/* its schema, where the work tables go */
	const char *prefix;			/* ndd_pairs_<random> */
	List	   *tables;			/* of const char *, quoted and qualified */
	int			guc_nest_level; /* of the call's citus.shard_replication_factor */
} CitusWork;

/* The distribution column of a table Citus distributes by hash; NULL otherwise. */
extern char *CitusDistributionColumn(Oid relid);

/* Is relid a table that Citus distributes by hash?  False where Citus is not installed. */
extern bool CitusHashDistributed(Oid relid);

/* Does Citus know relid (distributed, reference or Citus local)? */
extern bool CitusKnows(Oid relid);

/* The call's work tables: none yet; the settings they are made with. */
extern void CitusWorkInit(CitusWork *w, Oid relid);

/*
 * A new work table "prefix_role" (columns: its column list), distributed by
 * column and colocated with colocate_with (a table's name), or, when that is
 * NULL, in as many shards as the user's table.  Its name, quoted and
 * qualified.
 */
extern const char *CitusWorkTable(CitusWork *w, const char *role, const char *columns,
								  const char *column, const char *colocate_with);

/* Drop every work table, and undo the settings. */
extern void CitusWorkDrop(CitusWork *w);

/* Statistics of a filled work table, for the workers' plans of the next step. */
extern void CitusWorkAnalyze(const char *table);

#endif							/* NDD_CITUS_WORK_H */
