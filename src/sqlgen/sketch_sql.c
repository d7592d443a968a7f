/*
 * sketch_sql.c
 *		From a kind of sketch to the module that writes its SQL; see
 *		sketch_sql.h.
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "sqlgen/sketch_sql.h"

const SketchSql *
SketchSqlOf(SketchKind kind)
{
	switch (kind)
	{
		case SKETCH_MINHASH:
			return &minhash_sql;
		case SKETCH_SIMHASH:
			return &simhash_sql;
		default:
			elog(ERROR, "no SQL for sketch kind %d", (int) kind);
	}
	return NULL;				/* keep the compiler quiet */
}

void
SketchRuleInit(SketchRule *rule, SketchKind kind, const char *ndd,
			   double threshold, int32 max_distance)
{
	memset(rule, 0, sizeof(*rule));
	rule->sql = SketchSqlOf(kind);
	rule->ndd = ndd;
	rule->threshold = threshold;
	rule->max_distance = max_distance;
}

void
SketchRulePlanKeys(SketchRule *rule, int num_perm, double margin)
{
	rule->sql->plan_keys(rule, num_perm, margin);
}

char *
Float8Literal(double value)
{
	return psprintf("%s::pg_catalog.float8", quote_literal_cstr(psprintf("%.17g", value)));
}
