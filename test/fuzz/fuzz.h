/*
 * fuzz.h
 *		What the libFuzzer harnesses share: calling a function as the backend
 *		would (an ERROR is a rejected input, not a crash), the per-input arena,
 *		and the knobs of the shim (database encoding, opclass options).
 */
#ifndef NDD_FUZZ_H
#define NDD_FUZZ_H

#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>

#include "access/reloptions.h"
#include "fmgr.h"
#include "lib/stringinfo.h"

/* the last ERROR raised: its SQLSTATE and primary message */
extern int	fuzz_sqlerrcode;
extern char fuzz_errmsg[];

/* what GetDatabaseEncoding() returns (PG_UTF8 unless a harness sets it) */
extern int	fuzz_database_encoding;

/* what PG_GET_OPCLASS_OPTIONS() returns; NULL: the function has none */
extern bytea *fuzz_opclass_options;

/* the options an opclass options function declared (init_local_reloptions) */
typedef struct FuzzRelopt
{
	const char *name;
	char		type;			/* 'i'nt, 'r'eal, 'e'num */
	int			offset;
	int			int_default,
				int_min,
				int_max;
	double		real_default,
				real_min,
				real_max;
	relopt_enum_elt_def *members;
} FuzzRelopt;

#define FUZZ_MAX_RELOPTS 16
extern FuzzRelopt fuzz_relopts[FUZZ_MAX_RELOPTS];
extern int	fuzz_nrelopts;
extern Size fuzz_relopt_struct_size;
extern relopts_validator fuzz_relopt_validator;

/* Free everything palloc'd since the last reset. */
extern void FuzzReset(void);

/*
 * Call fn(arg); false if it raised an ERROR (then fuzz_sqlerrcode tells
 * which).  FATAL, PANIC and failed Asserts abort().
 */
extern bool FuzzTry(void (*fn) (void *arg), void *arg);

/* Call an fmgr function with nargs non-NULL arguments, as FuzzTry does. */
extern bool FuzzCall(PGFunction fn, int nargs, const Datum *args, Datum *result);

/*
 * A binary receive function on the bytes given, as the backend calls one
 * (ReceiveFunctionCall, array_recv, record_recv): the buffer holds a NUL
 * after its data, and bytes left unread are an error (22P03).
 */
extern bool FuzzRecv(PGFunction recv, const uint8_t *data, size_t len, Datum *result);

/* A plain 4-byte-header copy of a varlena, as the backend's detoast gives. */
extern struct varlena *FuzzVarlenaCopy(const void *data, size_t len);

/* Stop with a message: libFuzzer reports a crash and saves the input. */
#define FUZZ_FAIL(...) \
	do { \
		fprintf(stderr, "property failed at %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} while (0)

/*
 * An error a user caused must carry a specific SQLSTATE: XX000 comes from
 * elog(ERROR), which the style guide keeps for can't-happen cases.
 */
#define FUZZ_CHECK_USER_ERROR(what) \
	do { \
		if (fuzz_sqlerrcode == ERRCODE_INTERNAL_ERROR) \
			FUZZ_FAIL("%s raised an internal error (XX000): %s", what, fuzz_errmsg); \
	} while (0)

#endif							/* NDD_FUZZ_H */
