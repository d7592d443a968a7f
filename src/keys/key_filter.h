/*
 * key_filter.h
 *		The filter of keys that occur more than once (key_filter.c), from C:
 *		the discovery engine fills it in one pass over the rows and asks it
 *		in the next, as the SQL aggregates ndd_colliding_keys and
 *		ndd_colliding do over SPI.  The same sizes and slots, so the same
 *		keys are kept either way.  Where the filter would be too small for
 *		the table's keys, the engine counts them exactly instead, and asks
 *		only for the rule that leaves out a row's most frequent keys.
 */
#ifndef NDD_KEY_FILTER_H
#define NDD_KEY_FILTER_H

typedef struct KeyFilterState KeyFilterState;

/* a filter for about expected_keys keys (unknown: 0), within work_mem */
extern KeyFilterState *KeyFilterCreate(int64 expected_keys);
extern void KeyFilterAddKeys(KeyFilterState *filter, const uint64 *keys, int n);

/*
 * The bits a key of that filter for expected_keys keys under work_mem (it
 * wants 10, and passes about one single key in ten then); 0 when the keys
 * are not known.
 */
extern double KeyFilterBitsPerKey(int64 expected_keys);

/* the bytes of the filter as ndd_colliding_keys returns it, without header */
extern Size KeyFilterBytes(const KeyFilterState *filter);

/*
 * Of keys[0 .. n), those that may occur more than once, less the drop most
 * frequent, into kept (room for n): how many.
 */
extern int	KeyFilterColliding(const KeyFilterState *filter, const uint64 *keys, int n,
							   int drop, uint64 *kept);
extern void KeyFilterFree(KeyFilterState *filter);

/*
 * The same filter in shared memory for a parallel pass: the bytes it
 * takes, and a state over them (zeroed by the one that initializes), never
 * freed.  Each participant fills a filter of its own (KeyFilterCreate) and
 * adds it once: KeyFilterAddToShared, atomic, in any order.
 */
extern Size KeyFilterSharedSize(int64 expected_keys);
extern KeyFilterState *KeyFilterInShared(void *place, int64 expected_keys, bool initialize);
extern void KeyFilterAddToShared(KeyFilterState *shared, const KeyFilterState *own);

/*
 * Of keys[0 .. n), each held by counts[i] rows, all but the drop most
 * frequent by (count, key), in the row's order, into kept (room for n):
 * how many.
 */
extern int	KeysLessMostFrequent(const uint64 *keys, const uint32 *counts, int n, int drop,
								 uint64 *kept);

#endif							/* NDD_KEY_FILTER_H */
