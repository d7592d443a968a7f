/*
 * sort_uint64.c
 *		The one instantiation of PostgreSQL's sort template for uint64; see
 *		sort_uint64.h.
 *
 * Interruptible for every caller.  The shingle, SpotSigs and I-Match sets
 * of a long document hold millions of hashes and need it.  The lookup scan
 * (minhash_lookup_scan.c) sorts one window, at most a page of each of the
 * query's posting lists, and checks for cancel between windows anyway; the
 * check costs it one read of a flag per partitioning step, and takes no
 * effect while a buffer lock holds interrupts off.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/sort_uint64.h"

#define ST_SORT SortUint64
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE
#define ST_DEFINE
#include "lib/sort_template.h"
