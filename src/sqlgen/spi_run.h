/*
 * spi_run.h
 *		What the functions that run SQL against a user's table share: one
 *		statement over SPI, and a cursor's rows copied into a tuplestore.
 */
#ifndef NDD_SPI_RUN_H
#define NDD_SPI_RUN_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/spi.h"
#include "utils/tuplestore.h"

/* Run one statement; an error unless it runs (who: the SQL function). */
extern void RunStatement(const char *who, const char *sql, int nargs,
						 Oid *types, Datum *args, const char *nulls);

/*
 * Run one statement that only reads, as a STABLE function's must: with the
 * caller's snapshot, and no step of the command counter, which a parallel
 * worker may not take.
 */
extern void RunQuery(const char *who, const char *sql, int nargs,
					 Oid *types, Datum *args, const char *nulls);

/*
 * Copy every row of an open cursor into out (its first out_desc->natts
 * columns), a batch at a time, and close it: the tuplestore spills beyond
 * work_mem, so memory stays bounded however many rows there are.
 */
extern uint64 CopyCursor(Portal portal, Tuplestorestate *out, TupleDesc out_desc);

#endif							/* NDD_SPI_RUN_H */
