/*
 * key_filter.h
 *		From C, the rule of the key filter (key_filter.c) that all-pairs
 *		discovery applies to each row's keys: leave out the row's most
 *		frequent keys, as prefix filtering does.  The SQL path's aggregates
 *		count keys in a filter; the discovery engine counts them exactly, by
 *		sorting, and asks this for each row.
 */
#ifndef NDD_KEY_FILTER_H
#define NDD_KEY_FILTER_H

/*
 * Of keys[0 .. n), each held by counts[i] rows, all but the drop most
 * frequent by (count, key), in the row's order, into kept (room for n):
 * how many.
 */
extern int	KeysLessMostFrequent(const uint64 *keys, const uint32 *counts, int n, int drop,
								 uint64 *kept);

#endif							/* NDD_KEY_FILTER_H */
