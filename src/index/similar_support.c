/*
 * similar_support.c
 *		The planner support of similar(): turns similar(col, q, t) (or
 *		similar(q, col, t)) on an indexed column into the index condition
 *		col % ROW(q, t)::<type>_query, an exact equivalent, as PostGIS does
 *		for ST_DWithin.
 *
 * It also estimates similar()'s selectivity (see SimilarSupport).
 *
 * The threshold (minhash) or distance (simhash) travels in the query value,
 * so similar() needs no setting and can be IMMUTABLE: postgres_fdw sends it
 * to a shard, where the shard's index serves it.  The operator is looked up
 * in the index's own operator family, so an index of another opclass (or
 * another copy of ndd) is left alone.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "base/ndd_limits.h"

/*
 * The index condition for a SupportRequestIndexCondition on a three-argument
 * similar(), with the query type named query_type_name (in similar()'s
 * schema) and the operator of that strategy; NULL when there is none.
 */
static List *
SimilarIndexCondition(Node *rawreq, const char *query_type_name, StrategyNumber strategy)
{
	SupportRequestIndexCondition *req;
	FuncExpr   *call;
	Node	   *indexed;
	Node	   *other;
	Node	   *limit;
	Oid			query_type;
	Oid			opno;
	RowExpr    *row;

	if (!IsA(rawreq, SupportRequestIndexCondition))
		return NIL;
	req = (SupportRequestIndexCondition *) rawreq;
	if (!is_funcclause(req->node))
		return NIL;
	call = (FuncExpr *) req->node;
	if (list_length(call->args) != 3 || req->indexarg > 1)
		return NIL;

	indexed = (Node *) list_nth(call->args, req->indexarg);
	other = (Node *) list_nth(call->args, 1 - req->indexarg);
	limit = (Node *) list_nth(call->args, 2);

	/* the comparison value must be computable before the scan */
	if (contain_volatile_functions(other) || contain_volatile_functions(limit) ||
		bms_is_member(req->index->rel->relid, pull_varnos(req->root, other)) ||
		bms_is_member(req->index->rel->relid, pull_varnos(req->root, limit)))
		return NIL;

	/* find the query type and the operator in the index's own family */
	query_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								 CStringGetDatum(query_type_name),
								 ObjectIdGetDatum(get_func_namespace(req->funcid)));
	if (!OidIsValid(query_type))
		return NIL;
	opno = get_opfamily_member(req->opfamily, exprType(indexed), query_type, strategy);
	if (!OidIsValid(opno))
		return NIL;

	row = makeNode(RowExpr);
	row->args = list_make2(other, limit);
	row->row_typeid = query_type;
	row->row_format = COERCE_EXPLICIT_CAST;
	row->colnames = NIL;
	row->location = -1;

	req->lossy = false;
	return list_make1(make_opclause(opno, BOOLOID, false, (Expr *) indexed, (Expr *) row,
									InvalidOid, InvalidOid));
}

/*
 * The support of similar(): the index condition, and a selectivity.
 *
 * Without an estimate a boolean function gets a third of the table, and a
 * plan that wants only the first rows then prefers a sequential scan: a
 * postgres_fdw shard plans its query as a cursor (cursor_tuple_fraction),
 * and read a whole shard for every lookup.  A near-duplicate lookup matches
 * few rows: similar() is estimated as % is (matchingsel's default).
 */
static Node *
SimilarSupport(Node *rawreq, const char *query_type_name, StrategyNumber strategy)
{
	if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;

		req->selectivity = DEFAULT_MATCHING_SEL;
		return (Node *) req;
	}
	return (Node *) SimilarIndexCondition(rawreq, query_type_name, strategy);
}

/* similar(minhash, minhash, threshold) -> minhash % minhash_query */
PG_FUNCTION_INFO_V1(minhash_similar_support);
Datum
minhash_similar_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(SimilarSupport((Node *) PG_GETARG_POINTER(0), "minhash_query",
									 NDD_MINHASH_SIMILAR_QUERY_STRATEGY));
}

/* similar(simhash, simhash, max_distance) -> simhash % simhash_query */
PG_FUNCTION_INFO_V1(simhash_similar_support);
Datum
simhash_similar_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(SimilarSupport((Node *) PG_GETARG_POINTER(0), "simhash_query",
									 NDD_SIMHASH_MATCH_QUERY_STRATEGY));
}
