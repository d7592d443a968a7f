/*
 * minhash_lookup_scan.h
 *		What ndd.c needs of the lookup scan: its setting and its planner hook.
 */
#ifndef NDD_MINHASH_LOOKUP_SCAN_H
#define NDD_MINHASH_LOOKUP_SCAN_H

/* ndd.lookup_scan: may the planner offer the lookup scan? */
extern bool ndd_lookup_scan;

/* Install the planner hook that offers the lookup scan (from _PG_init). */
extern void MinHashLookupScanInit(void);

#endif							/* NDD_MINHASH_LOOKUP_SCAN_H */
