/*
 * key_filter.h
 *		The filter of keys that occur more than once (key_filter.c), from C:
 *		the discovery engine fills it in one pass over the rows and asks it
 *		in the next, as the SQL aggregates ndd_colliding_keys and
 *		ndd_colliding do over SPI.  The same sizes and slots, so the same
 *		keys are kept either way.
 */
#ifndef NDD_KEY_FILTER_H
#define NDD_KEY_FILTER_H

typedef struct KeyFilterState KeyFilterState;

/* a filter for about expected_keys keys (unknown: 0), within work_mem */
extern KeyFilterState *KeyFilterCreate(int64 expected_keys);
extern void KeyFilterAddKeys(KeyFilterState *filter, const uint64 *keys, int n);

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
 * takes, and a state over them (zeroed by the one that initializes) that
 * KeyFilterAddKeysShared fills atomically, never freed.
 */
extern Size KeyFilterSharedSize(int64 expected_keys);
extern KeyFilterState *KeyFilterInShared(void *place, int64 expected_keys, bool initialize);
extern void KeyFilterAddKeysShared(KeyFilterState *filter, const uint64 *keys, int n);

#endif							/* NDD_KEY_FILTER_H */
