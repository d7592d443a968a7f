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

#include "containment.h"
#include "ndd.h"
#include "shingle.h"
#include "sketch_column.h"

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

PG_FUNCTION_INFO_V1(contamination_pairs);
Datum
contamination_pairs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			items = PG_GETARG_OID(0);
	const char *item_column = NameStr(*PG_GETARG_NAME(1));
	const char *item_id = NameStr(*PG_GETARG_NAME(2));
	Oid			docs = PG_GETARG_OID(3);
	const char *doc_column = NameStr(*PG_GETARG_NAME(4));
	const char *doc_id = NameStr(*PG_GETARG_NAME(5));
	double		threshold = PG_GETARG_FLOAT8(6);
	int32		shingle_size = PG_GETARG_INT32(7);
	text	   *unit = PG_GETARG_TEXT_PP(8);
	bool		strip_html = PG_GETARG_BOOL(9);
	bool		progress = PG_GETARG_BOOL(10);
	Oid			ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	const char *ndd = quote_identifier(get_namespace_name(ndd_nsp));
	TimestampTz started = GetCurrentTimestamp();
	ShingleConfig cfg;
	AttrNumber	doc_attnum;
	Oid			id_type;
	Oid			opclass;
	int			others;
	SPIPlanPtr	probe;
	Oid			probe_types[5] = {TEXTOID, FLOAT8OID, INT4OID, TEXTOID, BOOLOID};
	Datum		probe_args[5];
	Portal		cursor;
	MemoryContext per_item;
	uint64		nitems = 0;
	uint64		npairs = 0;

	/* 1. the arguments: relations, a threshold, a shingling, text columns, integer ids */
	InitMaterializedSRF(fcinfo, 0);
	CheckRelationExists(items);
	CheckRelationExists(docs);
	NddCheckThreshold(threshold);
	ShingleConfigInit(&cfg, text_to_cstring(unit), shingle_size, strip_html, 0);
	{
		AttrNumber	unused;

		ResolveTextColumn(items, item_column, &unused);
		ResolveIdColumn(items, item_id, "Pairs name items by bigint ids.", &id_type);
	}
	ResolveTextColumn(docs, doc_column, &doc_attnum);
	ResolveIdColumn(docs, doc_id, "Pairs name documents by bigint ids.", &id_type);

	/* 2. the documents' index, without which every pair would be compared */
	opclass = get_opclass_oid(GIN_AM_OID, list_make2(makeString(get_namespace_name(ndd_nsp)),
													 makeString("containment_ops")), false);
	if (!FindContainmentIndex(docs, doc_attnum, opclass, &cfg, &others))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 others == 0 ?
				 errmsg("column \"%s\" of relation \"%s\" has no containment_ops index",
						doc_column, get_rel_name(docs)) :
				 errmsg("column \"%s\" of relation \"%s\" has no containment_ops index of shingle_size %d, unit %s, strip_html %s",
						doc_column, get_rel_name(docs),
						cfg.size, ShingleUnitName(cfg.unit), strip_html ? "true" : "false"),
				 others == 0 ?
				 errdetail("Without one every item would be compared with every document.") :
				 errdetail("Its containment_ops indexes hold other shingles, and without one of the items' shingling every item would be compared with every document."),
				 errhint("CREATE INDEX ON %s USING gin (%s containment_ops(shingle_size = %d, unit = '%s', strip_html = %s));",
						 QualifiedTableName(docs), quote_identifier(doc_column),
						 cfg.size, ShingleUnitName(cfg.unit), strip_html ? "true" : "false")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "contamination_pairs: SPI_connect failed");

	/*
	 * 3. the probe of one item, planned once; or for each item where indexes
	 * of other shinglings could serve a plan made without its value
	 */
	probe = SPI_prepare_cursor(psprintf(CONTAMINATION_PROBE_SQL, ndd, QualifiedTableName(docs),
										quote_identifier(doc_id), quote_identifier(doc_column)),
							   5, probe_types, others > 0 ? CURSOR_OPT_CUSTOM_PLAN : 0);
	if (probe == NULL)
		elog(ERROR, "contamination_pairs: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	probe_args[1] = Float8GetDatum(threshold);
	probe_args[2] = Int32GetDatum(shingle_size);
	probe_args[3] = PointerGetDatum(unit);
	probe_args[4] = BoolGetDatum(strip_html);

	/* 4. every item, a batch at a time, each against the index */
	cursor = SPI_cursor_open_with_args(NULL,
									   psprintf(CONTAMINATION_ITEMS_SQL, QualifiedTableName(items),
												quote_identifier(item_id), quote_identifier(item_column)),
									   0, NULL, NULL, NULL, true, 0);
	per_item = AllocSetContextCreate(CurrentMemoryContext, "contamination_pairs item",
									 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		SPITupleTable *batch;
		uint64		nbatch;

		SPI_cursor_fetch(cursor, true, ITEM_BATCH);
		batch = SPI_tuptable;
		nbatch = SPI_processed;
		/* the probes below replace SPI_tuptable: keep this one */
		SPI_tuptable = NULL;
		if (nbatch == 0)
			break;
		for (uint64 r = 0; r < nbatch; r++)
		{
			bool		isnull;
			int64		item = DatumGetInt64(SPI_getbinval(batch->vals[r], batch->tupdesc, 1, &isnull));
			Datum		passage = SPI_getbinval(batch->vals[r], batch->tupdesc, 2, &isnull);
			MemoryContext outer;

			CHECK_FOR_INTERRUPTS();
			outer = MemoryContextSwitchTo(per_item);
			probe_args[0] = passage;
			if (SPI_execute_plan(probe, probe_args, NULL, true, 0) != SPI_OK_SELECT)
				elog(ERROR, "contamination_pairs: the probe failed");
			for (uint64 m = 0; m < SPI_processed; m++)
			{
				Datum		values[3];
				bool		nulls[3] = {false, false, false};
				bool		null_id;

				values[0] = Int64GetDatum(item);
				values[1] = SPI_getbinval(SPI_tuptable->vals[m], SPI_tuptable->tupdesc, 1, &null_id);
				values[2] = SPI_getbinval(SPI_tuptable->vals[m], SPI_tuptable->tupdesc, 2, &nulls[2]);
				nulls[1] = null_id;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
				npairs++;
			}
			SPI_freetuptable(SPI_tuptable);
			MemoryContextSwitchTo(outer);
			MemoryContextReset(per_item);
			nitems++;
			if (progress && nitems % PROGRESS_EVERY == 0)
				ereport(NOTICE,
						(errmsg("ndd: " UINT64_FORMAT " items checked, " UINT64_FORMAT " pairs",
								nitems, npairs),
						 errdetail("%s", Elapsed(started))));
		}
		SPI_freetuptable(batch);
	}
	SPI_cursor_close(cursor);
	if (progress)
		ereport(NOTICE,
				(errmsg("ndd: " UINT64_FORMAT " items checked, " UINT64_FORMAT " pairs", nitems, npairs),
				 errdetail("%s", Elapsed(started))));
	SPI_finish();
	return (Datum) 0;
}
