/*
 * sketch_sql.h
 *		What ndd runs against a column of sketches, by kind of sketch: the
 *		bucket keys a near pair is sure to share, the score of a pair, the
 *		test that a pair qualifies, and the test an index serves to find a
 *		row's near neighbours.
 *
 * Discovery (pairs.c), top-k (top_k.c), the insert guard (trigger.c) and
 * live clusters (live_clusters.c, maintain_clusters.c) ask here; nothing
 * else writes these fragments.  A kind of sketch is one module
 * (minhash_sql.c, simhash_sql.c) filling in a SketchSql; a new kind adds
 * its module and a case in SketchSqlOf.
 *
 * Every fragment takes SQL expressions (a qualified column, a parameter
 * such as $1) that the caller has quoted, and returns a new palloc'd
 * string that qualifies every function and operator and casts literals.
 */
#ifndef NDD_SKETCH_SQL_H
#define NDD_SKETCH_SQL_H

#include "postgres.h"

#include "base/sketch_column.h"

typedef struct SketchSql SketchSql;

/* what a caller asks for: which pairs are near, for one kind of sketch */
typedef struct SketchRule
{
	const SketchSql *sql;		/* the kind's module */
	const char *ndd;			/* ndd's schema, quoted */
	double		threshold;		/* minhash: similarity at least this */
	int32		max_distance;	/* simhash: at most this many bits apart */

	/* set by SketchRulePlanKeys */
	double		lower;			/* the estimate a candidate must reach */
	int32		bands;			/* minhash: bands of rows positions */
	int32		rows;
	int32		required;		/* keys a qualifying pair is sure to share */
} SketchRule;

struct SketchSql
{
	const char *nearest_first;	/* the order of scores, nearest first */
	Oid			limit_type;		/* the type of the threshold or distance */

	/* the bucket keys for sketches of num_perm positions (0: not minhash) */
	void		(*plan_keys) (SketchRule *rule, int num_perm, double margin);
	/* the bucket keys of sketch s, an int8[] */
	char	   *(*keys) (const SketchRule *rule, const char *s);
	/* the score of a pair: similarity, or bits apart */
	char	   *(*score) (const SketchRule *rule, const char *a, const char *b);
	/* the pair qualifies: its score reaches the rule's lower limit */
	char	   *(*qualifies) (const SketchRule *rule, const char *a, const char *b);
	/* discovery's similarity and distance columns of a pair */
	char	   *(*report) (const SketchRule *rule, const char *a, const char *b);
	/* the pair qualifies, by the similarity and distance report gave it */
	char	   *(*report_qualifies) (const SketchRule *rule, const char *similarity,
									 const char *distance);
	/* an index-served test that row r is near q, limit the threshold or distance */
	char	   *(*near) (const SketchRule *rule, const char *r, const char *q, const char *limit);
	/*
	 * the same test as an immutable call, similar(): what postgres_fdw sends
	 * to a shard, and what the planner's support function (similar_support.c)
	 * turns into an index condition
	 */
	char	   *(*near_immutable) (const SketchRule *rule, const char *r, const char *q, const char *limit);

	/* discovery's cheap test of two rows before their sketches are read */
	char	   *(*summary) (const SketchRule *rule, const char *s);
	char	   *(*summary_type) (const SketchRule *rule);
	char	   *(*close_enough) (const SketchRule *rule, const char *x, const char *y);
};

extern const SketchSql minhash_sql;
extern const SketchSql simhash_sql;

/* the module of a kind of sketch (one kind, not a set of them) */
extern const SketchSql *SketchSqlOf(SketchKind kind);

/* a rule for kind, before its keys are planned */
extern void SketchRuleInit(SketchRule *rule, SketchKind kind, const char *ndd,
						   double threshold, int32 max_distance);

/* the rule's bucket keys; margin: standard deviations below the threshold */
extern void SketchRulePlanKeys(SketchRule *rule, int num_perm, double margin);

/* a float8 literal that reads back as the same double */
extern char *Float8Literal(double value);

#endif							/* NDD_SKETCH_SQL_H */
