/*
 * pairs.h
 *		near_duplicate_pairs' steps, for the features built on its pairs.
 */
#ifndef NDD_PAIRS_H
#define NDD_PAIRS_H

#include "postgres.h"

#include "fmgr.h"


/*
 * On a table Citus distributes by hash (CitusHashDistributed): the pairs of
 * the call's first seven arguments, as near_duplicate_pairs takes them,
 * into a distributed table of columns (u, v); their count.  SPI is
 * connected.
 */
extern uint64 PairsOnCitusInto(FunctionCallInfo fcinfo, const char *into);

#endif							/* NDD_PAIRS_H */
