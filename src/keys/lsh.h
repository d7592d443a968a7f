/*
 * lsh.h
 *		LSH banding of minhash sketches: band keys, the pigeonhole bound that
 *		makes banded search exact, and default bandings.
 */
#ifndef NDD_LSH_H
#define NDD_LSH_H

#include "sketch/minhash.h"

extern uint64 LshBandHash(const MinHash *mh, int band, int rows);
extern int	LshMinAgreeing(int num_perm, double threshold);
extern int	LshRequiredBands(int num_perm, int bands, int rows, double threshold);
extern void LshBandingForThreshold(int num_perm, double threshold, int *bands, int *rows);
extern double LshMarginThreshold(int num_perm, double threshold, double margin);

/* standard deviations below the threshold that verified candidates reach */
#define LSH_VERIFY_MARGIN	3.0

/* Error out unless there is at least one band of at least one row. */
static inline void
LshCheckBandsRows(int bands, int rows)
{
	if (bands < 1 || rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be positive, not %d and %d", bands, rows)));
}

/* Error out unless b bands of r rows fit in a sketch of num_perm positions. */
static inline void
LshCheckBanding(int num_perm, int bands, int rows)
{
	LshCheckBandsRows(bands, rows);
	if ((int64) bands * rows > num_perm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg_plural("%d band of %d rows needs %lld positions, but the sketch has %d",
							   "%d bands of %d rows need %lld positions, but the sketch has %d",
							   bands, bands, rows, (long long) bands * rows, num_perm),
				 errhint("Choose bands * rows at most %d.", num_perm)));
}

#endif							/* NDD_LSH_H */
