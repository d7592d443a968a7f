/*
 * toast_read.h
 *		Reading a value stored out of line (TOAST) so that query cancel is
 *		honoured while its chunks are fetched.
 */
#ifndef NDD_TOAST_READ_H
#define NDD_TOAST_READ_H

#include "postgres.h"

/*
 * value in memory: a value stored out of line is fetched in slices, with a
 * look at pending interrupts between them, and comes back still compressed
 * if it was stored so; anything else comes back as it is.
 */
extern struct varlena *ToastFetchCancellable(struct varlena *value);

/* value as PG_DETOAST_DATUM_PACKED gives it, its fetch honouring cancel. */
extern struct varlena *DetoastPackedCancellable(struct varlena *value);

/* value as PG_DETOAST_DATUM gives it, its fetch honouring cancel. */
extern struct varlena *DetoastCancellable(struct varlena *value);

/* PG_GETARG_TEXT_PP(n), its fetch honouring cancel */
#define PG_GETARG_TEXT_PP_CANCELLABLE(n) \
	((text *) DetoastPackedCancellable((struct varlena *) PG_GETARG_POINTER(n)))

#endif							/* NDD_TOAST_READ_H */
