/*
 * simhash_sql.c
 *		The SQL ndd runs against a column of simhash fingerprints (see
 *		sketch_sql.h): block keys within max_distance bits (simhash_keys.c),
 *		the Hamming distance as the score, and the % operator, which reads
 *		ndd.hamming_threshold, for the index.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "sqlgen/sketch_sql.h"

/* one shared block key is sure for a pair within max_distance bits */
static void
SimhashPlanKeys(SketchRule *rule, int num_perm, double margin)
{
	rule->lower = rule->max_distance;
	rule->required = 1;
}

static char *
SimhashKeys(const SketchRule *rule, const char *s)
{
	return psprintf("%s.simhash_keys(%s, %d::pg_catalog.int4)", rule->ndd, s, rule->max_distance);
}

static char *
SimhashScore(const SketchRule *rule, const char *a, const char *b)
{
	return psprintf("%s.hamming_distance(%s, %s)", rule->ndd, a, b);
}


static char *
SimhashReport(const SketchRule *rule, const char *a, const char *b)
{
	return psprintf("%s.simhash_cosine(%s, %s), %s",
					rule->ndd, a, b, SimhashScore(rule, a, b));
}

static char *
SimhashReportQualifies(const SketchRule *rule, const char *similarity, const char *distance)
{
	return psprintf("%s OPERATOR(pg_catalog.<=) %d::pg_catalog.int4", distance, rule->max_distance);
}

static char *
SimhashQualifies(const SketchRule *rule, const char *a, const char *b)
{
	return SimhashReportQualifies(rule, NULL, SimhashScore(rule, a, b));
}

/* % finds candidates within ndd.hamming_threshold; the distance decides */
static char *
SimhashNear(const SketchRule *rule, const char *r, const char *q, const char *limit)
{
	return psprintf("%s OPERATOR(%s.%%) %s AND %s OPERATOR(pg_catalog.<=) %s",
					r, rule->ndd, q, SimhashScore(rule, r, q), limit);
}

static char *
SimhashNearImmutable(const SketchRule *rule, const char *r, const char *q, const char *limit)
{
	return psprintf("%s.similar(%s, %s, %s)", rule->ndd, r, q, limit);
}

/* the fingerprint is its own summary */
static char *
SimhashSummary(const SketchRule *rule, const char *s)
{
	return pstrdup(s);
}

static char *
SimhashSummaryType(const SketchRule *rule)
{
	return psprintf("%s.simhash", rule->ndd);
}

static char *
SimhashCloseEnough(const SketchRule *rule, const char *x, const char *y)
{
	return SimhashQualifies(rule, x, y);
}

const SketchSql simhash_sql = {
	.nearest_first = "ASC",
	.limit_type = INT4OID,
	.plan_keys = SimhashPlanKeys,
	.keys = SimhashKeys,
	.score = SimhashScore,
	.qualifies = SimhashQualifies,
	.report = SimhashReport,
	.report_qualifies = SimhashReportQualifies,
	.near = SimhashNear,
	.near_immutable = SimhashNearImmutable,
	.summary = SimhashSummary,
	.summary_type = SimhashSummaryType,
	.close_enough = SimhashCloseEnough,
};
