/*
 * ndd.c
 *		Module entry point: the magic block and the ndd.* configuration settings.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "base/ndd_limits.h"
#include "features/discovery.h"
#include "index/minhash_lookup_scan.h"
#include "sketch/minhash.h"
#include "sketch/simhash.h"

/* 18 lets a module name itself (and its version) in pg_get_loaded_modules */
#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(.name = "ndd");
#else
PG_MODULE_MAGIC;
#endif

void		_PG_init(void);

/*
 * Define the ndd.* settings and claim the prefix, as pg_trgm does; install
 * the planner hook of the lookup scan (minhash_lookup_scan.c).
 */
void
_PG_init(void)
{
	DefineCustomRealVariable("ndd.similarity_threshold",
							 "Sets the threshold used by the % operator for minhash.",
							 "Valid range is 0.0 .. 1.0.",
							 &ndd_similarity_threshold,
							 NDD_SIMILARITY_THRESHOLD_DEFAULT,
							 0.0,
							 1.0,
							 PGC_USERSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomIntVariable("ndd.hamming_threshold",
							"Sets the threshold used by the % operator for simhash.",
							"Valid range is 0 .. 64 (bits that may differ).",
							&ndd_hamming_threshold,
							NDD_HAMMING_THRESHOLD_DEFAULT,
							NDD_HAMMING_THRESHOLD_MIN,
							NDD_HAMMING_THRESHOLD_MAX,
							PGC_USERSET,
							0,
							NULL,
							NULL,
							NULL);

	DefineCustomBoolVariable("ndd.lookup_scan",
							 "Lets the planner answer % through a minhash_ops index by counting keys per row.",
							 "Off leaves such lookups to GIN's own bitmap scan; the rows are the same.",
							 &ndd_lookup_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomEnumVariable("ndd.discovery_path",
							 "Chooses how near_duplicate_pairs finds pairs: auto, engine or sql.",
							 "auto takes the engine where it can read the table; engine fails where it cannot; sql takes SQL statements over temporary tables.  The pairs are the same.",
							 &ndd_discovery_path,
							 DISCOVERY_PATH_AUTO,
							 discovery_path_options,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomBoolVariable("ndd.discovery_row_numbers",
							 "Lets the discovery engine number rows in 32 bits where the table allows.",
							 "Off makes it keep whole heap positions in its records, as it must for tables of 64 GB and more, so that their layout can be tested on small tables.  The pairs are the same.",
							 &ndd_discovery_row_numbers,
							 true,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);

	MarkGUCPrefixReserved("ndd");
	MinHashLookupScanInit();
}
