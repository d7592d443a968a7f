/*
 * minhash_index_tables.c
 *		What the minhash_ops indexes of a table can answer, for the functions
 *		that run over a table (top-k): the operator family of ndd's schema,
 *		and the lowest threshold every index on a column serves exactly.
 *
 * Kept apart from the operator class (minhash_gin.c), which needs nothing
 * of the catalog beyond an index's own options, and so is what the fuzzing
 * harnesses link.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "index/minhash_gin.h"

/* The GIN operator family minhash_ops of the schema ndd is installed in. */
Oid
MinHashGinFamily(Oid ndd_function)
{
	return get_opfamily_oid(GIN_AM_OID,
							list_make2(makeString(get_namespace_name(get_func_namespace(ndd_function))),
									   makeString("minhash_ops")),
							false);
}

/*
 * minhash_index_exact_threshold(tbl regclass, sketch_column name): the
 * lowest threshold from which similar() on the column is exact through
 * every minhash_ops index on it, of the table and of its partitions or
 * inheritance children (whichever the planner picks); NULL when there is
 * none.  Top-k search (near_duplicate_top_k) asks it how low the index can
 * take it.
 */
PG_FUNCTION_INFO_V1(minhash_index_exact_threshold);
Datum
minhash_index_exact_threshold(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Name		column = PG_GETARG_NAME(1);
	Oid			family;
	AclResult	aclresult;
	List	   *tables;
	ListCell   *lt;
	double		result = -1.0;

	/* lock nothing the caller may not read: the table, or the column */
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK &&
		get_attnum(relid, NameStr(*column)) > 0 &&
		pg_attribute_aclcheck(relid, get_attnum(relid, NameStr(*column)),
							  GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		aclresult = ACLCHECK_OK;
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
	family = MinHashGinFamily(fcinfo->flinfo->fn_oid);
	tables = find_all_inheritors(relid, AccessShareLock, NULL);
	foreach(lt, tables)
	{
		Oid			table = lfirst_oid(lt);
		AttrNumber	attnum = get_attnum(table, NameStr(*column));
		Relation	rel;
		List	   *indexes;
		ListCell   *lc;

		if (attnum == InvalidAttrNumber)
		{
			if (table == relid)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" of relation \"%s\" does not exist",
								NameStr(*column), get_rel_name(relid))));
			continue;
		}
		rel = table_open(table, AccessShareLock);
		indexes = RelationGetIndexList(rel);
		foreach(lc, indexes)
		{
			Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

			if (index->rd_rel->relam == GIN_AM_OID)
				for (int col = 0; col < index->rd_index->indnatts; col++)
					if (index->rd_index->indkey.values[col] == attnum &&
						index->rd_opfamily[col] == family)
						result = Max(result, MinHashGinLowestExact(index, col + 1));
			index_close(index, AccessShareLock);
		}
		list_free(indexes);
		table_close(rel, AccessShareLock);
	}
	if (result < 0.0)
		PG_RETURN_NULL();
	PG_RETURN_FLOAT8(result);
}
