/*
 * citus_work.c
 *		The work tables of ndd's map-reduce on Citus; see citus_work.h.
 *
 * They are created, never reused: a table of the same name (a random one)
 * makes the call fail.  An error or a cancel rolls their creation back with
 * the transaction, on every node; at the end of a call they are dropped.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "features/citus_work.h"
#include "sqlgen/spi_run.h"

/* the hash-distributed table's distribution column ($1 the table) */
#define CITUS_DISTRIBUTION_SQL \
	"SELECT pg_catalog.column_to_column_name(d.logicalrelid, d.partkey)\n" \
	"FROM pg_catalog.pg_dist_partition d\n" \
	"WHERE d.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1\n" \
	"  AND d.partmethod OPERATOR(pg_catalog.=) 'h'::pg_catalog.\"char\""

/* $1 a work table, $2 its distribution column, $3 what to colocate it with */
#define CITUS_DISTRIBUTE_SQL \
	"SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3)"

/*
 * or $3 its shards, as many as the table's ($1), in a colocation group of
 * its own (the default one would be shared with unrelated tables, and a new
 * one locked until the transaction ends)
 */
#define CITUS_DISTRIBUTE_COUNTED_SQL \
	"SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => 'none'::pg_catalog.text, shard_count => $3)"

/* the placements of one shard of the table $1: its replication factor */
#define CITUS_REPLICATION_SQL \
	"SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_dist_placement p\n" \
	"WHERE p.shardid OPERATOR(pg_catalog.=) (SELECT pg_catalog.min(s.shardid) FROM pg_catalog.pg_dist_shard s\n" \
	"                                        WHERE s.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1)"
#define CITUS_SHARD_COUNT_SQL \
	"SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_dist_shard s\n" \
	"WHERE s.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1"

/* any table Citus knows ($1): distributed, reference, or a Citus local table */
#define CITUS_KNOWS_SQL \
	"SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition d\n" \
	"               WHERE d.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1)"

#define Exec(sql, nargs, types, args) \
	RunStatement("ndd on Citus", sql, nargs, types, args, NULL)

/* The first column of the first row of a query of Citus's catalog about relid ($1). */
static Datum
AskAbout(const char *sql, Oid relid, bool *isnull)
{
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};

	Exec(sql, 1, types, args);
	if (SPI_processed == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
}

/* Is Citus installed here?  Its catalog is in pg_catalog. */
static bool
CitusInstalled(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE));
}

char *
CitusDistributionColumn(Oid relid)
{
	bool		isnull;
	Datum		column;

	if (!CitusInstalled())
		return NULL;
	column = AskAbout(CITUS_DISTRIBUTION_SQL, relid, &isnull);
	return isnull ? NULL : TextDatumGetCString(column);
}

bool
CitusKnows(Oid relid)
{
	bool		isnull;
	Datum		known;

	if (!CitusInstalled())
		return false;
	known = AskAbout(CITUS_KNOWS_SQL, relid, &isnull);
	return !isnull && DatumGetBool(known);
}

bool
CitusHashDistributed(Oid relid)
{
	return CitusDistributionColumn(relid) != NULL;
}

/*
 * The work tables are made with as many placements as the table's shards,
 * or Citus would not colocate them with it: citus.shard_replication_factor
 * for this call only, in a GUC nest level of its own (undone at the end, or
 * with the transaction on error).
 */
static void
SetReplication(CitusWork *w)
{
	bool		isnull;
	int32		replicas = DatumGetInt32(AskAbout(CITUS_REPLICATION_SQL, w->relid, &isnull));

	w->guc_nest_level = NewGUCNestLevel();
	if (!isnull && replicas > 0)
		(void) set_config_option("citus.shard_replication_factor", psprintf("%d", replicas), PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

void
CitusWorkInit(CitusWork *w, Oid relid)
{
	w->relid = relid;
	w->schema = get_namespace_name(get_rel_namespace(relid));
	w->prefix = psprintf("ndd_pairs_%016llx", (unsigned long long) pg_prng_uint64(&pg_global_prng_state));
	w->tables = NIL;
	SetReplication(w);
}

const char *
CitusWorkTable(CitusWork *w, const char *role, const char *columns, const char *column,
			   const char *colocate_with)
{
	const char *bare = psprintf("%s_%s", w->prefix, role);
	const char *name = psprintf("%s.%s", quote_identifier(w->schema), quote_identifier(bare));
	Oid			types[3] = {REGCLASSOID, TEXTOID, TEXTOID};
	Datum		args[3];
	bool		isnull;

	/* heap whatever the session's default: the work tables are deleted from */
	Exec(psprintf("CREATE TABLE %s (%s) USING heap", name, columns), 0, NULL, NULL);
	w->tables = lappend(w->tables, (void *) name);
	args[0] = ObjectIdGetDatum(get_relname_relid(bare, get_namespace_oid(w->schema, false)));
	args[1] = CStringGetTextDatum(column);
	if (colocate_with)
	{
		args[2] = CStringGetTextDatum(colocate_with);
		Exec(CITUS_DISTRIBUTE_SQL, 3, types, args);
		return name;
	}
	/* the user's table's shards decide how the work is split */
	args[2] = AskAbout(CITUS_SHARD_COUNT_SQL, w->relid, &isnull);
	types[2] = INT4OID;
	Exec(CITUS_DISTRIBUTE_COUNTED_SQL, 3, types, args);
	return name;
}

void
CitusWorkDrop(CitusWork *w)
{
	StringInfoData sql;
	ListCell   *lc;

	if (w->tables != NIL)
	{
		initStringInfo(&sql);
		appendStringInfoString(&sql, "DROP TABLE ");
		foreach(lc, w->tables)
			appendStringInfo(&sql, "%s%s", foreach_current_index(lc) > 0 ? ", " : "", (const char *) lfirst(lc));
		Exec(sql.data, 0, NULL, NULL);
		w->tables = NIL;
	}
	AtEOXact_GUC(true, w->guc_nest_level);
}

void
CitusWorkAnalyze(const char *table)
{
	Exec(psprintf("ANALYZE %s", table), 0, NULL, NULL);
}
