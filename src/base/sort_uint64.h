/*
 * sort_uint64.h
 *		One ascending sort of uint64 arrays (hashes, heap item numbers) for
 *		every file that needs one: PostgreSQL's sort template, instantiated
 *		once in sort_uint64.c.  It includes nothing of ndd.
 */
#ifndef NDD_SORT_UINT64_H
#define NDD_SORT_UINT64_H

/*
 * Sort n values in place, ascending.  It honours query cancel
 * (CHECK_FOR_INTERRUPTS once per partitioning step): a document's hashes
 * may number millions.
 */
extern void SortUint64(uint64 *begin, size_t n);

#endif							/* NDD_SORT_UINT64_H */
