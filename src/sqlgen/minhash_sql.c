/*
 * minhash_sql.c
 *		The SQL ndd runs against a column of minhash sketches (see
 *		sketch_sql.h): band keys exact at the threshold by the pigeonhole
 *		bound (lsh.c), similarity as the score, and the % operator with a
 *		minhash_query for the index.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "keys/lsh.h"
#include "sqlgen/sketch_sql.h"

/* the banding exact at the threshold, less margin standard deviations */
static void
MinhashPlanKeys(SketchRule *rule, int num_perm, double margin)
{
	rule->lower = margin > 0 ? LshMarginThreshold(num_perm, rule->threshold, margin) :
		rule->threshold;
	LshBandingForThreshold(num_perm, rule->lower, &rule->bands, &rule->rows);
	rule->required = LshRequiredBands(num_perm, rule->bands, rule->rows, rule->lower);
}

static char *
MinhashKeys(const SketchRule *rule, const char *s)
{
	return psprintf("%s.minhash_band_keys(%s, %d::pg_catalog.int4, %d::pg_catalog.int4)",
					rule->ndd, s, rule->bands, rule->rows);
}

static char *
MinhashScore(const SketchRule *rule, const char *a, const char *b)
{
	return psprintf("%s.similarity(%s, %s)", rule->ndd, a, b);
}


static char *
MinhashReport(const SketchRule *rule, const char *a, const char *b)
{
	return psprintf("%s, NULL::pg_catalog.int4", MinhashScore(rule, a, b));
}

static char *
MinhashReportQualifies(const SketchRule *rule, const char *similarity, const char *distance)
{
	return psprintf("%s OPERATOR(pg_catalog.>=) %s", similarity, Float8Literal(rule->lower));
}

static char *
MinhashQualifies(const SketchRule *rule, const char *a, const char *b)
{
	return MinhashReportQualifies(rule, MinhashScore(rule, a, b), NULL);
}

static char *
MinhashNear(const SketchRule *rule, const char *r, const char *q, const char *limit)
{
	return psprintf("%1$s OPERATOR(%2$s.%%) ROW(%3$s, %4$s)::%2$s.minhash_query",
					r, rule->ndd, q, limit);
}

static char *
MinhashNearImmutable(const SketchRule *rule, const char *r, const char *q, const char *limit)
{
	return psprintf("%s.similar(%s, %s, %s)", rule->ndd, r, q, limit);
}

/*
 * A pair that shares `required` of the bands agrees on at least
 * bands * rows - (bands - required) positions, so on their low bits too.
 */
static char *
MinhashSummary(const SketchRule *rule, const char *s)
{
	return psprintf("%s.minhash_lowbits(%s)", rule->ndd, s);
}

static char *
MinhashSummaryType(const SketchRule *rule)
{
	return pstrdup("pg_catalog.bytea");
}

static char *
MinhashCloseEnough(const SketchRule *rule, const char *x, const char *y)
{
	return psprintf("%s.minhash_lowbits_agreement(%s, %s) OPERATOR(pg_catalog.>=) %d::pg_catalog.int4",
					rule->ndd, x, y, rule->bands * rule->rows - rule->bands + rule->required);
}

const SketchSql minhash_sql = {
	.nearest_first = "DESC",
	.limit_type = FLOAT8OID,
	.plan_keys = MinhashPlanKeys,
	.keys = MinhashKeys,
	.score = MinhashScore,
	.qualifies = MinhashQualifies,
	.report = MinhashReport,
	.report_qualifies = MinhashReportQualifies,
	.near = MinhashNear,
	.near_immutable = MinhashNearImmutable,
	.summary = MinhashSummary,
	.summary_type = MinhashSummaryType,
	.close_enough = MinhashCloseEnough,
};
