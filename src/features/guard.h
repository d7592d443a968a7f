/*
 * guard.h
 *		What the insert guard (trigger.c) shares with the other triggers that
 *		must serialize the writers of near-duplicates: tokens, running
 *		statements as a table's owner, and the GIN indexes a check reads.
 */
#ifndef NDD_GUARD_H
#define NDD_GUARD_H

#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/snapshot.h"

#include "sketch/minhash.h"
#include "sketch/simhash.h"

/* the token table, in ndd's schema (token_table.c) */
#define LOCK_TABLE_NAME		"ndd_near_duplicate_locks"

/* The caller's role and settings, saved while ndd runs its statements. */
typedef struct GuardState
{
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} GuardState;

extern void GuardEnter(GuardState *state, Oid role, const char *hamming_threshold);
extern void GuardLeave(GuardState *state);
extern Oid	RelationOwner(Oid relid);
extern SPIPlanPtr PrepareAs(Oid role, const char *sql, int nargs, Oid *argtypes);
extern int	RunAs(Oid role, SPIPlanPtr plan, Datum *args, const char *nulls, long count,
				  const char *hamming_threshold, Snapshot snapshot);
extern Oid	TriggerTarget(Trigger *trigger);

extern ArrayType *MinHashLockTokens(const MinHash *mh, double threshold);
extern ArrayType *SimHashLockTokens(SimHash v, int max_distance);
extern void ClaimTokens(Oid nsp, Oid target, ArrayType *tokens);
extern ArrayType *MergeTokens(ArrayType *a, ArrayType *b);
extern void LockTokens(Oid target, ArrayType *tokens);

extern Oid *GinIndexesOn(const char *trigger_name, const char *column, const char *schema_name,
						 List *tables, bool check_exact, double threshold, int *n);
extern void BoundPendingList(Oid indexoid);

/*
 * One row's change to a cluster table of ndd_maintain_clusters, as the
 * trigger (live_clusters.c) hands it to the step (maintain_clusters.c).
 * Neither an old nor a new id: a TRUNCATE.
 */
/* why a cluster table's ids must be integers (ResolveIdColumn) */
#define CLUSTER_IDS_DETAIL "Cluster ids are the ids of their representatives."

typedef struct ClusterChange
{
	Oid			tbl;			/* the table */
	Oid			mapping;		/* its cluster table */
	const char *sketch_column;
	const char *id_column;
	bool		has_threshold;	/* a minhash rule */
	double		threshold;
	bool		has_max_distance;	/* a simhash rule: pairs by distance */
	int32		max_distance;
	const char *representative_order;	/* NULL: the smallest id */
	bool		has_old_id;
	int64		old_id;
	bool		has_new_id;
	int64		new_id;
	bool		sketch_changed;
} ClusterChange;

extern void ApplyClusterChange(Oid ndd_nsp, const ClusterChange *change);

#endif							/* NDD_GUARD_H */
