/*
 * contamination.c
 *		contamination_pairs(): every (item, document) pair in which the
 *		document contains at least a share t of the item's shingles, as a
 *		contamination check of short items (test questions, passages)
 *		against long documents (a training corpus, an archive).
 *
 * One call, one item at a time: each item is a containment query through
 * the documents' containment_ops index (containment.c), so the work grows
 * with the items times the candidates each one's keys bring, not with
 * items times documents.  The index is required, of the items' shingling
 * and in any position of its columns: without one the call would compare
 * every item with every document, and it says so instead.  Where the
 * column has indexes of other shinglings too, each item is planned with
 * its value, so that the planner sees that only the matching index narrows
 * the rows (containment.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "index/containment_gin.h"
#include "text/containment.h"
#include "text/shingle.h"

/* Items fetched from the cursor at a time. */
#define ITEM_BATCH			100
/* Items between two progress notices. */
#define PROGRESS_EVERY		1000

/* the items: %1$s the table, %2$s the id column, %3$s the text column */
#define CONTAMINATION_ITEMS_SQL \
	"SELECT i.%2$s::pg_catalog.int8, i.%3$s::pg_catalog.text FROM %1$s i\n" \
	"WHERE i.%3$s IS NOT NULL AND i.%2$s IS NOT NULL"

/*
 * one item against the documents: %1$s ndd, %2$s the documents, %3$s their
 * id, %4$s their text; $1 the item, $2 the threshold, $3-$5 the shingling
 */
#define CONTAMINATION_PROBE_SQL \
	"SELECT d.%3$s::pg_catalog.int8, %1$s.containment($1, d.%4$s::pg_catalog.text, $3, $4, $5)\n" \
	"FROM %2$s d\n" \
	"WHERE d.%4$s::pg_catalog.text OPERATOR(%1$s.@>) %1$s.containment_query($1, $2, $3, $4, $5)\n" \
	"  AND d.%3$s IS NOT NULL"

/* Error out unless relid names a relation, which stays locked (42P01, not "(null)"). */
static void
CheckRelationExists(Oid relid)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);

	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	relation_close(rel, NoLock);
}

/* Error out unless column name of relid is of a text type. */
static void
ResolveTextColumn(Oid relid, const char *name, AttrNumber *attnum)
{
	Oid			type;

	*attnum = ResolveColumn(relid, name, &type);
	type = getBaseType(type);
	if (type != TEXTOID && type != VARCHAROID && type != BPCHAROID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of a text type",
						name, get_rel_name(relid)),
				 errdetail("Containment compares the shingles of texts.")));
}

/*
 * Is column attnum of relid a key, in any position, of a valid, unpartial
 * containment_ops index (opclass) shingled as cfg?  *others counts its
 * containment_ops indexes shingled otherwise.
 */
static bool
FindContainmentIndex(Oid relid, AttrNumber attnum, Oid opclass, const ShingleConfig *cfg,
					 int *others)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		found = false;

	*others = 0;
	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;
		bool		isnull;
		oidvector  *indclass;

		indclass = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, index->rd_indextuple,
																 Anum_pg_index_indclass, &isnull));
		if (form->indisvalid && heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
			for (int col = 0; col < form->indnkeyatts; col++)
			{
				ShingleConfig index_cfg;

				if (form->indkey.values[col] != attnum || indclass->values[col] != opclass)
					continue;
				ContainmentIndexShingling(RelationGetIndexAttOptions(index, false)[col], &index_cfg);
				if (ContainmentSameShingling(&index_cfg, cfg))
					found = true;
				else
					(*others)++;
			}
		index_close(index, AccessShareLock);
	}
	list_free(indexes);
	relation_close(rel, AccessShareLock);
	return found;
}

/* "00:00:01.5 so far", since started */
static char *
Elapsed(TimestampTz started)
{
	return psprintf("%s so far",
					DatumGetCString(DirectFunctionCall1(interval_out,
														DirectFunctionCall2(timestamp_mi,
																			TimestampTzGetDatum(GetCurrentTimestamp()),
																			TimestampTzGetDatum(started)))));
}

/* One call: its arguments, and what its steps share. */
typedef struct Contamination
{
	Oid			items;
	const char *item_column;
	const char *item_id;
	Oid			docs;
	const char *doc_column;
	const char *doc_id;
	double		threshold;
	text	   *unit;
	bool		strip_html;
	bool		progress;
	ShingleConfig cfg;
	Oid			ndd_nsp;
	AttrNumber	doc_attnum;
	int			others;			/* the column's containment_ops indexes of
								 * other shinglings */
	SPIPlanPtr	probe;			/* one item against the documents */
	Datum		probe_args[5];
	Tuplestorestate *out;
	TupleDesc	out_desc;
	MemoryContext per_item;		/* reset after each item */
	TimestampTz started;
	uint64		nitems;
	uint64		npairs;
} Contamination;

/* Step 1: the arguments: relations, a threshold, a shingling, text columns, integer ids. */
static void
ReadArguments(FunctionCallInfo fcinfo, Contamination *c)
{
	AttrNumber	item_attnum;
	Oid			id_type;

	c->items = PG_GETARG_OID(0);
	c->item_column = NameStr(*PG_GETARG_NAME(1));
	c->item_id = NameStr(*PG_GETARG_NAME(2));
	c->docs = PG_GETARG_OID(3);
	c->doc_column = NameStr(*PG_GETARG_NAME(4));
	c->doc_id = NameStr(*PG_GETARG_NAME(5));
	c->threshold = PG_GETARG_FLOAT8(6);
	c->unit = PG_GETARG_TEXT_PP(8);
	c->strip_html = PG_GETARG_BOOL(9);
	c->progress = PG_GETARG_BOOL(10);
	c->ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);

	CheckRelationExists(c->items);
	CheckRelationExists(c->docs);
	NddCheckThreshold(c->threshold);
	ShingleConfigInit(&c->cfg, text_to_cstring(c->unit), PG_GETARG_INT32(7), c->strip_html, 0);
	ResolveTextColumn(c->items, c->item_column, &item_attnum);
	ResolveIdColumn(c->items, c->item_id, "Pairs name items by bigint ids.", &id_type);
	ResolveTextColumn(c->docs, c->doc_column, &c->doc_attnum);
	ResolveIdColumn(c->docs, c->doc_id, "Pairs name documents by bigint ids.", &id_type);
}

/* Step 2: the documents' index, without which every pair would be compared. */
static void
RequireContainmentIndex(Contamination *c)
{
	Oid			opclass;
	const char *strip_html = c->strip_html ? "true" : "false";

	opclass = get_opclass_oid(GIN_AM_OID, list_make2(makeString(get_namespace_name(c->ndd_nsp)),
													 makeString("containment_ops")), false);
	if (FindContainmentIndex(c->docs, c->doc_attnum, opclass, &c->cfg, &c->others))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 c->others == 0 ?
			 errmsg("column \"%s\" of relation \"%s\" has no containment_ops index",
					c->doc_column, get_rel_name(c->docs)) :
			 errmsg("column \"%s\" of relation \"%s\" has no containment_ops index of shingle_size %d, unit %s, strip_html %s",
					c->doc_column, get_rel_name(c->docs),
					c->cfg.size, ShingleUnitName(c->cfg.unit), strip_html),
			 c->others == 0 ?
			 errdetail("Without one every item would be compared with every document.") :
			 errdetail("Its containment_ops indexes hold other shingles, and without one of the items' shingling every item would be compared with every document."),
			 errhint("CREATE INDEX ON %s USING gin (%s containment_ops(shingle_size = %d, unit = '%s', strip_html = %s));",
					 QualifiedTableName(c->docs), quote_identifier(c->doc_column),
					 c->cfg.size, ShingleUnitName(c->cfg.unit), strip_html)));
}

/*
 * Step 3: the probe of one item, planned once; or for each item where
 * indexes of other shinglings could serve a plan made without its value.
 */
static void
PrepareProbe(Contamination *c)
{
	Oid			types[5] = {TEXTOID, FLOAT8OID, INT4OID, TEXTOID, BOOLOID};
	const char *ndd = quote_identifier(get_namespace_name(c->ndd_nsp));

	c->probe = SPI_prepare_cursor(psprintf(CONTAMINATION_PROBE_SQL, ndd, QualifiedTableName(c->docs),
										   quote_identifier(c->doc_id), quote_identifier(c->doc_column)),
								  5, types, c->others > 0 ? CURSOR_OPT_CUSTOM_PLAN : 0);
	if (c->probe == NULL)
		elog(ERROR, "contamination_pairs: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	c->probe_args[1] = Float8GetDatum(c->threshold);
	c->probe_args[2] = Int32GetDatum(c->cfg.size);
	c->probe_args[3] = PointerGetDatum(c->unit);
	c->probe_args[4] = BoolGetDatum(c->strip_html);
}

/* "ndd: N items checked, N pairs", with the time so far. */
static void
ReportProgress(Contamination *c)
{
	ereport(NOTICE,
			(errmsg("ndd: " UINT64_FORMAT " items checked, " UINT64_FORMAT " pairs",
					c->nitems, c->npairs),
			 errdetail("%s", Elapsed(c->started))));
}

/* One item against the index: its pairs into the answer. */
static void
ProbeItem(Contamination *c, int64 item, Datum passage)
{
	MemoryContext outer;

	CHECK_FOR_INTERRUPTS();
	outer = MemoryContextSwitchTo(c->per_item);
	c->probe_args[0] = passage;
	if (SPI_execute_plan(c->probe, c->probe_args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "contamination_pairs: the probe failed");
	for (uint64 m = 0; m < SPI_processed; m++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int64GetDatum(item);
		values[1] = SPI_getbinval(SPI_tuptable->vals[m], SPI_tuptable->tupdesc, 1, &nulls[1]);
		values[2] = SPI_getbinval(SPI_tuptable->vals[m], SPI_tuptable->tupdesc, 2, &nulls[2]);
		tuplestore_putvalues(c->out, c->out_desc, values, nulls);
		c->npairs++;
	}
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(outer);
	MemoryContextReset(c->per_item);
	c->nitems++;
	if (c->progress && c->nitems % PROGRESS_EVERY == 0)
		ReportProgress(c);
}

/* Step 4: every item, a batch at a time, each against the index. */
static void
ProbeItems(Contamination *c)
{
	Portal		cursor;

	cursor = SPI_cursor_open_with_args(NULL,
									   psprintf(CONTAMINATION_ITEMS_SQL, QualifiedTableName(c->items),
												quote_identifier(c->item_id), quote_identifier(c->item_column)),
									   0, NULL, NULL, NULL, true, 0);
	c->per_item = AllocSetContextCreate(CurrentMemoryContext, "contamination_pairs item",
										ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		SPITupleTable *batch;
		uint64		nbatch;

		SPI_cursor_fetch(cursor, true, ITEM_BATCH);
		batch = SPI_tuptable;
		nbatch = SPI_processed;
		/* the probes replace SPI_tuptable: keep this one */
		SPI_tuptable = NULL;
		if (nbatch == 0)
			break;
		for (uint64 r = 0; r < nbatch; r++)
		{
			bool		isnull;
			int64		item = DatumGetInt64(SPI_getbinval(batch->vals[r], batch->tupdesc, 1, &isnull));

			ProbeItem(c, item, SPI_getbinval(batch->vals[r], batch->tupdesc, 2, &isnull));
		}
		SPI_freetuptable(batch);
	}
	SPI_cursor_close(cursor);
}

PG_FUNCTION_INFO_V1(contamination_pairs);
Datum
contamination_pairs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Contamination c = {0};

	c.started = GetCurrentTimestamp();
	InitMaterializedSRF(fcinfo, 0);
	c.out = rsinfo->setResult;
	c.out_desc = rsinfo->setDesc;

	ReadArguments(fcinfo, &c);
	RequireContainmentIndex(&c);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "contamination_pairs: SPI_connect failed");
	PrepareProbe(&c);
	ProbeItems(&c);
	if (c.progress)
		ReportProgress(&c);
	SPI_finish();
	return (Datum) 0;
}
