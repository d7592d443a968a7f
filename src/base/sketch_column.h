/*
 * sketch_column.h
 *		From (table, column) to what ndd must know before it runs SQL
 *		against a user's table: the column's number and type, the kind of
 *		sketch it holds, and ndd's own schema.
 *
 * Every entry point that takes a table and column names asks here, so a
 * missing column is 42703 and a column of another type 42804, with the
 * same message, wherever it is named.
 */
#ifndef NDD_SKETCH_COLUMN_H
#define NDD_SKETCH_COLUMN_H

#include "postgres.h"

#include "access/attnum.h"

/* the kinds of sketch a column may hold; a set of them is their OR */
typedef enum SketchKind
{
	SKETCH_NONE = 0,
	SKETCH_MINHASH = 1 << 0,
	SKETCH_SIMHASH = 1 << 1,
} SketchKind;

typedef struct SketchColumn
{
	Oid			relid;
	const char *name;			/* as given */
	AttrNumber	attnum;
	Oid			type;
	SketchKind	kind;
} SketchColumn;

/* the schema ndd is installed in: that of one of its own functions */
extern Oid	NddNamespace(Oid ndd_function);

/* 42P01 naming the OID when relid names no relation (a regclass of 0, or dropped) */
extern void ErrorIfNoRelation(Oid relid);

/* the column's number (and type): 42P01 when tbl does not exist, 42703 when it has no such column */
extern AttrNumber ResolveColumn(Oid relid, const char *name, Oid *type);

/* the kind of sketch a type is, SKETCH_NONE for any other type */
extern SketchKind SketchKindOf(Oid type, Oid ndd_nsp);

/* a column holding one of kinds: 42703 when missing, 42804 otherwise */
extern void ResolveSketchColumn(Oid relid, const char *name, Oid ndd_nsp,
								int kinds, SketchColumn *column);

/*
 * a column of integer ids: 42703 when missing, 42804 unless smallint,
 * integer or bigint (or a domain over one); *type is that base type, and
 * detail says why ids must be integers
 */
extern AttrNumber ResolveIdColumn(Oid relid, const char *name, const char *detail, Oid *type);

/* an id of such a column as bigint */
extern int64 IdGetInt64(Datum value, Oid type);

/* tbl as SQL names it, qualified and quoted */
extern char *QualifiedTableName(Oid relid);

#endif							/* NDD_SKETCH_COLUMN_H */
