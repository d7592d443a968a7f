/*
 * radix_sort.h
 *		Fixed-width records sorted by one uint64 or uint32 field, a digit at
 *		a time from the least significant (radix_sort.c).  The discovery
 *		engine sorts partitions of millions of 12- to 48-byte records by a
 *		key or a heap position, where a comparison sort took a quarter of
 *		its time.  It includes nothing of ndd.
 */
#ifndef NDD_RADIX_SORT_H
#define NDD_RADIX_SORT_H

/*
 * Sort records[0 .. n), each width bytes, ascending by the uint64 at
 * key_offset in each; records with equal fields keep their order.
 * scratch holds as many bytes as the records.  It honours query cancel.
 */
extern void RadixSortRecords(char *records, char *scratch, size_t n, size_t width,
							 size_t key_offset);
/* The same by a uint32 field. */
extern void RadixSortRecords32(char *records, char *scratch, size_t n, size_t width,
							   size_t key_offset);

/*
 * The same records with equal fields together, each field's in their
 * order, the groups in no order that means anything.  Cheaper than a sort
 * when only equality matters.
 */
extern void RadixGroupRecords(char *records, char *scratch, size_t n, size_t width,
							  size_t key_offset);
/* The same by the given low bits of the hashes (11, 22 or 33): for the fuzz harness. */
extern void RadixGroupRecordsByBits(char *records, char *scratch, size_t n, size_t width,
									size_t key_offset, int bits);

/*
 * The same by a uint32 field that is already a hash, sorted by its own
 * low bits; and by the given bits, for the fuzz harness.
 */
extern void RadixGroupRecords32(char *records, char *scratch, size_t n, size_t width,
								size_t key_offset);
extern void RadixGroupRecords32ByBits(char *records, char *scratch, size_t n, size_t width,
									  size_t key_offset, int bits);

#endif							/* NDD_RADIX_SORT_H */
