/*
 * clusters_citus.h
 *		near_duplicate_clusters on a table Citus distributes by hash, its
 *		components computed on the workers.
 */
#ifndef NDD_CLUSTERS_CITUS_H
#define NDD_CLUSTERS_CITUS_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"
#include "utils/tuplestore.h"

/*
 * Each clustered id of the call's table (its first argument) with its
 * component's least id, into out, from the pairs of its first seven
 * arguments.  SPI is connected.
 */
extern void ClustersOnCitus(FunctionCallInfo fcinfo, Tuplestorestate *out, TupleDesc out_desc,
							bool progress);

#endif							/* NDD_CLUSTERS_CITUS_H */
