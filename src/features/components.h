/*
 * components.h
 *		The union-find of components.c, for C that joins pairs of ids into
 *		connected components without building the aggregate's array:
 *		create it, add the pairs, then walk (id, label) by slot.
 *
 *	Components *c = ComponentsCreate(context);
 *	ComponentsAddPair(c, a, b);				for each pair
 *	labels = ComponentsLabels(c);			once every pair is in
 *	for (uint32 i = 0; i < ComponentsCount(c); i++)
 *		(ComponentsIds(c)[i], labels[i])
 *
 * Slots number the ids in the order they were first seen; a label is the
 * smallest id of its component.  30 to 55 bytes per distinct id, and 8
 * for its label (components.c).
 */
#ifndef NDD_COMPONENTS_H
#define NDD_COMPONENTS_H

#include "postgres.h"

typedef struct Components Components;

/* An empty union-find, all of it allocated in context. */
extern Components *ComponentsCreate(MemoryContext context);

/* Join the components of two ids (each its own component when new). */
extern void ComponentsAddPair(Components *c, int64 id_a, int64 id_b);

/* How many distinct ids the pairs have brought: the slots 0 .. count - 1. */
extern uint32 ComponentsCount(const Components *c);

/* The id of each slot: valid until the next pair (the array may move). */
extern const int64 *ComponentsIds(const Components *c);

/*
 * The label of each slot, the smallest id of its component, in a new array
 * of the current memory context; the union-find can take more pairs after.
 */
extern int64 *ComponentsLabels(Components *c);

#endif							/* NDD_COMPONENTS_H */
