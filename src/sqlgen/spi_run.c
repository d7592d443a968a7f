/*
 * spi_run.c
 *		Statements and cursors over SPI; see spi_run.h.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "sqlgen/spi_run.h"

/* rows a cursor hands over at a time */
#define CURSOR_FETCH_ROWS 10000

static void
Run(const char *who, const char *sql, int nargs, Oid *types, Datum *args,
	const char *nulls, bool read_only)
{
	if (SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0) < 0)
		elog(ERROR, "%s: SPI_execute_with_args failed: %s", who, sql);
}

void
RunStatement(const char *who, const char *sql, int nargs, Oid *types,
			 Datum *args, const char *nulls)
{
	Run(who, sql, nargs, types, args, nulls, false);
}

void
RunQuery(const char *who, const char *sql, int nargs, Oid *types,
		 Datum *args, const char *nulls)
{
	Run(who, sql, nargs, types, args, nulls, true);
}

uint64
CopyCursor(Portal portal, Tuplestorestate *out, TupleDesc out_desc)
{
	int			natts = out_desc->natts;
	Datum	   *values = palloc(natts * sizeof(Datum));
	bool	   *nulls = palloc(natts * sizeof(bool));
	uint64		n = 0;

	for (;;)
	{
		SPI_cursor_fetch(portal, true, CURSOR_FETCH_ROWS);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			for (int c = 0; c < natts; c++)
				values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
										  c + 1, &nulls[c]);
			tuplestore_putvalues(out, out_desc, values, nulls);
		}
		n += SPI_processed;
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	pfree(values);
	pfree(nulls);
	return n;
}
