/*
 * lsh.h
 *		LSH banding of minhash sketches: band keys, the pigeonhole bound that
 *		makes banded search exact, and default bandings.
 */
#ifndef NDD_LSH_H
#define NDD_LSH_H

#include "minhash.h"

extern void LshCheckBanding(int num_perm, int bands, int rows);
extern uint64 LshBandHash(const MinHash *mh, int band, int rows);
extern int	LshMinAgreeing(int num_perm, double threshold);
extern int	LshRequiredBands(int num_perm, int bands, int rows, double threshold);
extern void LshBandingForThreshold(int num_perm, double threshold, int *bands, int *rows);
extern double LshMarginThreshold(int num_perm, double threshold, double margin);

/* standard deviations below the threshold that verified candidates reach */
#define LSH_VERIFY_MARGIN	3.0

#endif							/* NDD_LSH_H */
