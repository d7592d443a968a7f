/*
 * sketch_column.c
 *		Resolving (table, column) for the functions that run SQL against a
 *		user's table; see sketch_column.h.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/sketch_column.h"

Oid
NddNamespace(Oid ndd_function)
{
	return get_func_namespace(ndd_function);
}

void
ErrorIfNoRelation(Oid relid)
{
	/* else a message would name relation "(null)" */
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
}

AttrNumber
ResolveColumn(Oid relid, const char *name, Oid *type)
{
	AttrNumber	attnum;

	ErrorIfNoRelation(relid);
	attnum = get_attnum(relid, name);

	/* system columns are not what a caller names: they hold no sketch or id */
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						name, get_rel_name(relid))));
	if (type)
		*type = get_atttype(relid, attnum);
	return attnum;
}

static Oid
NddType(const char *name, Oid ndd_nsp)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(ndd_nsp));
}

SketchKind
SketchKindOf(Oid type, Oid ndd_nsp)
{
	if (type == NddType("minhash", ndd_nsp))
		return SKETCH_MINHASH;
	if (type == NddType("simhash", ndd_nsp))
		return SKETCH_SIMHASH;
	return SKETCH_NONE;
}

void
ResolveSketchColumn(Oid relid, const char *name, Oid ndd_nsp, int kinds,
					SketchColumn *column)
{
	column->relid = relid;
	column->name = name;
	column->attnum = ResolveColumn(relid, name, &column->type);
	column->kind = SketchKindOf(column->type, ndd_nsp);
	if ((column->kind & kinds) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type %s",
						name, get_rel_name(relid),
						kinds == SKETCH_MINHASH ? "minhash" :
						kinds == SKETCH_SIMHASH ? "simhash" : "minhash or simhash")));
}

AttrNumber
ResolveIdColumn(Oid relid, const char *name, const char *detail, Oid *type)
{
	AttrNumber	attnum = ResolveColumn(relid, name, type);

	*type = getBaseType(*type);
	if (*type != INT2OID && *type != INT4OID && *type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type smallint, integer or bigint",
						name, get_rel_name(relid)),
				 errdetail_internal("%s", detail)));
	return attnum;
}

int64
IdGetInt64(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(value);
		case INT4OID:
			return DatumGetInt32(value);
		default:
			return DatumGetInt64(value);
	}
}

char *
QualifiedTableName(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}
