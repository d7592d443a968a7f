/*
 * pg_shim.c
 *		The few backend functions the src/ files call, for the fuzz harnesses: the
 *		server is not a library, so error reporting, memory, detoast, pqformat,
 *		encoding conversion and opclass options are provided here.  Debian's
 *		frontend libpgcommon and libpgport (same 15.x headers as the server's)
 *		provide StringInfo, psprintf, unicode_normalize, the UTF-8 helpers,
 *		pg_popcount64, pg_qsort and the snprintf family.
 *
 * Where a function here behaves unlike PostgreSQL's the comment says so.
 * Functions that no harness can reach (planner support, SRFs, syscache...)
 * abort if called, so a harness that starts reaching one fails loudly.
 *
 * Deviations that could hide a bug:
 * - libpgcommon and libpgport are not built with the sanitizers: an
 *   out-of-bounds read *inside* pg_utf_mblen, utf8_to_unicode,
 *   unicode_normalize... (given a bad pointer by our code) goes unseen.
 * - Frontend stringinfo.c exits (instead of ERROR) past 1 GB; no harness
 *   input comes near.
 * - InterruptPending is never set, so the CHECK_FOR_INTERRUPTS paths are
 *   compiled but ProcessInterrupts never runs.
 * - Memory contexts are one arena, freed after each input: code that keeps
 *   a pointer across calls in a context that outlives the call would look
 *   fine here.  MemoryContextAlloc ignores its context.
 */
#include "postgres.h"

#include <setjmp.h>
#include <sanitizer/asan_interface.h>

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "common/unicode_norm.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "port/pg_bswap.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "utils/sortsupport.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "fuzz.h"

/* ---------------------------------------------------------------------
 * Globals the backend defines
 * ---------------------------------------------------------------------
 */
sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;
volatile sig_atomic_t InterruptPending = false;
MemoryContext CurrentMemoryContext = NULL;
int			work_mem = 4096;

int			fuzz_database_encoding = PG_UTF8;
bytea	   *fuzz_opclass_options = NULL;

void
ProcessInterrupts(void)
{
	fprintf(stderr, "shim: ProcessInterrupts called, InterruptPending is never set\n");
	abort();
}

/* ---------------------------------------------------------------------
 * Error reporting: ERROR longjmps to the harness, FATAL and up abort.
 * Every message is formatted, below ERROR too, so a bad format or
 * argument is found even where the backend would skip the message.
 * ---------------------------------------------------------------------
 */
int			fuzz_sqlerrcode;
char		fuzz_errmsg[1024];
static int	cur_elevel;
static int	cur_sqlerrcode;
static int	error_depth;

bool
errstart(int elevel, const char *domain)
{
	if (error_depth++ > 0)
	{
		fprintf(stderr, "shim: error raised while reporting another\n");
		abort();
	}
	cur_elevel = elevel;
	if (elevel >= ERROR)
		cur_sqlerrcode = ERRCODE_INTERNAL_ERROR;
	else if (elevel >= WARNING)
		cur_sqlerrcode = ERRCODE_WARNING;
	else
		cur_sqlerrcode = ERRCODE_SUCCESSFUL_COMPLETION;
	fuzz_errmsg[0] = '\0';
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

int
errcode(int sqlerrcode)
{
	cur_sqlerrcode = sqlerrcode;
	return 0;
}

/* format a message into buf (an array), as the backend's error functions do */
#define SHIM_FORMAT(buf, fmt) \
	do { \
		va_list		ap; \
		va_start(ap, fmt); \
		vsnprintf(buf, sizeof(buf), fmt, ap); \
		va_end(ap); \
	} while (0)

int
errmsg(const char *fmt,...)
{
	SHIM_FORMAT(fuzz_errmsg, fmt);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	SHIM_FORMAT(fuzz_errmsg, fmt);
	return 0;
}

int
errmsg_plural(const char *fmt_singular, const char *fmt_plural,
			  unsigned long n,...)
{
	va_list		ap;

	va_start(ap, n);
	vsnprintf(fuzz_errmsg, sizeof(fuzz_errmsg), n == 1 ? fmt_singular : fmt_plural, ap);
	va_end(ap);
	return 0;
}

/* details and hints are formatted (so bad formats still show) and dropped */
int
errdetail(const char *fmt,...)
{
	char		buf[1024];

	SHIM_FORMAT(buf, fmt);
	return 0;
}

int
errhint(const char *fmt,...)
{
	char		buf[1024];

	SHIM_FORMAT(buf, fmt);
	return 0;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	error_depth = 0;
	if (cur_elevel < ERROR)
		return;
	if (cur_elevel >= FATAL || PG_exception_stack == NULL)
	{
		fprintf(stderr, "shim: elevel %d at %s:%d (%s): %s\n",
				cur_elevel, filename, lineno, funcname, fuzz_errmsg);
		abort();
	}
	fuzz_sqlerrcode = cur_sqlerrcode;
	siglongjmp(*PG_exception_stack, 1);
}

/* 16 dropped errorType (the headers of 17 and 18 have it so) */
#if PG_VERSION_NUM >= 160000
void
ExceptionalCondition(const char *conditionName,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "shim: Assert(\"%s\") failed at %s:%d\n",
			conditionName, fileName, lineNumber);
	abort();
}
#else
void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "shim: %s(\"%s\") failed at %s:%d\n",
			errorType, conditionName, fileName, lineNumber);
	abort();
}
#endif

bool
FuzzTry(void (*fn) (void *arg), void *arg)
{
	sigjmp_buf *save = PG_exception_stack;
	sigjmp_buf	jb;
	bool		ok;

	fuzz_sqlerrcode = 0;
	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		fn(arg);
		ok = true;
	}
	else
		ok = false;
	PG_exception_stack = save;
	return ok;
}

typedef struct CallArgs
{
	PGFunction	fn;
	int			nargs;
	const Datum *args;
	Datum		result;
	bool		isnull;
} CallArgs;

static void
DoCall(void *arg)
{
	CallArgs   *c = (CallArgs *) arg;
	LOCAL_FCINFO(fcinfo, FUNC_MAX_ARGS);
	FmgrInfo	flinfo;

	memset(&flinfo, 0, sizeof(flinfo));
	flinfo.fn_addr = c->fn;
	flinfo.fn_nargs = c->nargs;
	flinfo.fn_strict = true;
	InitFunctionCallInfoData(*fcinfo, &flinfo, c->nargs, InvalidOid, NULL, NULL);
	for (int i = 0; i < c->nargs; i++)
	{
		fcinfo->args[i].value = c->args[i];
		fcinfo->args[i].isnull = false;
	}
	c->result = c->fn(fcinfo);
	c->isnull = fcinfo->isnull;
}

bool
FuzzCall(PGFunction fn, int nargs, const Datum *args, Datum *result)
{
	CallArgs	c = {fn, nargs, args, 0, false};

	if (!FuzzTry(DoCall, &c))
		return false;
	if (c.isnull)
	{
		fprintf(stderr, "shim: function returned NULL\n");
		abort();
	}
	*result = c.result;
	return true;
}

typedef struct RecvArgs
{
	PGFunction	recv;
	StringInfoData buf;
	Datum		result;
} RecvArgs;

static void
DoRecv(void *arg)
{
	RecvArgs   *r = (RecvArgs *) arg;
	Datum		a = PointerGetDatum(&r->buf);
	CallArgs	c = {r->recv, 1, &a, 0, false};

	DoCall(&c);
	r->result = c.result;
	/* ReceiveFunctionCall's check */
	if (r->buf.cursor != r->buf.len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("incorrect binary data format")));
}

bool
FuzzRecv(PGFunction recv, const uint8_t *data, size_t len, Datum *result)
{
	RecvArgs	r;
	bool		ok;

	r.recv = recv;
	r.buf.data = palloc(len + 1);
	memcpy(r.buf.data, data, len);
	r.buf.data[len] = '\0';
	r.buf.len = len;
	r.buf.maxlen = len + 1;
	r.buf.cursor = 0;
	ok = FuzzTry(DoRecv, &r);
	if (ok)
		*result = r.result;
	return ok;
}

/* ---------------------------------------------------------------------
 * Memory: every chunk is its own malloc (so ASan sees each one), on a list
 * freed by FuzzReset.  The header is poisoned while the chunk is in use.
 * The size checks are palloc's.
 * ---------------------------------------------------------------------
 */
typedef struct Chunk
{
	struct Chunk *prev;
	struct Chunk *next;
	size_t		size;
	size_t		magic;
} Chunk;

#define CHUNK_MAGIC 0x5eedf00dcafe1234ULL

static Chunk arena = {&arena, &arena, 0, 0};

static void *
ChunkAlloc(Size size, int flags)
{
	Chunk	   *c;

	if (!((flags & MCXT_ALLOC_HUGE) ? AllocHugeSizeIsValid(size) : AllocSizeIsValid(size)))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	c = malloc(sizeof(Chunk) + size);
	if (c == NULL)
	{
		if (flags & MCXT_ALLOC_NO_OOM)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	c->size = size;
	c->magic = CHUNK_MAGIC;
	c->prev = &arena;
	c->next = arena.next;
	ASAN_UNPOISON_MEMORY_REGION(arena.next, sizeof(Chunk));
	arena.next->prev = c;
	ASAN_POISON_MEMORY_REGION(arena.next, arena.next == &arena ? 0 : sizeof(Chunk));
	arena.next = c;
	ASAN_POISON_MEMORY_REGION(c, sizeof(Chunk));
	if (flags & MCXT_ALLOC_ZERO)
		memset(c + 1, 0, size);
	return c + 1;
}

static Chunk *
ChunkOf(void *pointer)
{
	Chunk	   *c = (Chunk *) pointer - 1;

	ASAN_UNPOISON_MEMORY_REGION(c, sizeof(Chunk));
	if (c->magic != CHUNK_MAGIC)
	{
		fprintf(stderr, "shim: pfree/repalloc of memory palloc did not give\n");
		abort();
	}
	return c;
}

static void
ChunkUnlink(Chunk *c)
{
	ASAN_UNPOISON_MEMORY_REGION(c->prev, sizeof(Chunk));
	ASAN_UNPOISON_MEMORY_REGION(c->next, sizeof(Chunk));
	c->prev->next = c->next;
	c->next->prev = c->prev;
	if (c->prev != &arena)
		ASAN_POISON_MEMORY_REGION(c->prev, sizeof(Chunk));
	if (c->next != &arena)
		ASAN_POISON_MEMORY_REGION(c->next, sizeof(Chunk));
	c->magic = 0;
	free(c);
}

void
FuzzReset(void)
{
	for (;;)
	{
		Chunk	   *c = arena.next;

		if (c == &arena)
			break;
		ASAN_UNPOISON_MEMORY_REGION(c, sizeof(Chunk));
		ChunkUnlink(c);
	}
	error_depth = 0;
	fuzz_opclass_options = NULL;
}

void *
palloc(Size size)
{
	return ChunkAlloc(size, 0);
}

void *
palloc0(Size size)
{
	return ChunkAlloc(size, MCXT_ALLOC_ZERO);
}

void *
palloc_extended(Size size, int flags)
{
	return ChunkAlloc(size, flags);
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return ChunkAlloc(size, 0);
}

void *
MemoryContextAllocHuge(MemoryContext context, Size size)
{
	return ChunkAlloc(size, MCXT_ALLOC_HUGE);
}

void *
MemoryContextAllocZeroAligned(MemoryContext context, Size size)
{
	return ChunkAlloc(size, MCXT_ALLOC_ZERO);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return ChunkAlloc(size, MCXT_ALLOC_ZERO);
}

/* simplehash's allocator */
void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return ChunkAlloc(size, flags);
}

void
pfree(void *pointer)
{
	ChunkUnlink(ChunkOf(pointer));
}

static void *
Realloc(void *pointer, Size size, int flags)
{
	Chunk	   *c = ChunkOf(pointer);
	size_t		old = c->size;
	void	   *n;

	ASAN_POISON_MEMORY_REGION(c, sizeof(Chunk));
	n = ChunkAlloc(size, flags);
	memcpy(n, pointer, Min(old, size));
	pfree(pointer);
	return n;
}

void *
repalloc(void *pointer, Size size)
{
	return Realloc(pointer, size, 0);
}

void *
repalloc_huge(void *pointer, Size size)
{
	return Realloc(pointer, size, MCXT_ALLOC_HUGE);
}

char *
pstrdup(const char *in)
{
	return pnstrdup(in, strlen(in));
}

char *
pnstrdup(const char *in, Size len)
{
	char	   *out;

	len = strnlen(in, len);
	out = palloc(len + 1);
	memcpy(out, in, len);
	out[len] = '\0';
	return out;
}

/*
 * The frontend unicode_normalize returns malloc'd memory, the backend's
 * palloc'd: give callers (who pfree it) a palloc'd copy.  (-Wl,--wrap)
 */
extern pg_wchar *__real_unicode_normalize(UnicodeNormalizationForm form, const pg_wchar *input);

pg_wchar *
__wrap_unicode_normalize(UnicodeNormalizationForm form, const pg_wchar *input)
{
	pg_wchar   *r = __real_unicode_normalize(form, input);
	pg_wchar   *copy;
	size_t		n = 0;

	if (r == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	while (r[n])
		n++;
	copy = palloc((n + 1) * sizeof(pg_wchar));
	memcpy(copy, r, (n + 1) * sizeof(pg_wchar));
	free(r);
	return copy;
}

/* ---------------------------------------------------------------------
 * Varlenas
 * ---------------------------------------------------------------------
 */

/* Only plain and short-header values reach us: no TOAST pointers. */
struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (VARATT_IS_EXTERNAL(datum) || VARATT_IS_COMPRESSED(datum))
	{
		fprintf(stderr, "shim: toasted datum\n");
		abort();
	}
	if (VARATT_IS_SHORT(datum))
	{
		/* heap_tuple_untoast_attr's copy with a 4-byte header */
		Size		len = VARSIZE_SHORT(datum) - VARHDRSZ_SHORT;
		struct varlena *copy = palloc(len + VARHDRSZ);

		SET_VARSIZE(copy, len + VARHDRSZ);
		memcpy(VARDATA(copy), VARDATA_SHORT(datum), len);
		return copy;
	}
	return datum;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	if (VARATT_IS_EXTERNAL(datum) || VARATT_IS_COMPRESSED(datum))
	{
		fprintf(stderr, "shim: toasted datum\n");
		abort();
	}
	return datum;
}

struct varlena *
FuzzVarlenaCopy(const void *data, size_t len)
{
	struct varlena *v = palloc(len + VARHDRSZ);

	SET_VARSIZE(v, len + VARHDRSZ);
	memcpy(VARDATA(v), data, len);
	return v;
}

char *
text_to_cstring(const text *t)
{
	text	   *tunpacked = pg_detoast_datum_packed(unconstify(text *, t));
	int			len = VARSIZE_ANY_EXHDR(tunpacked);
	char	   *result = palloc(len + 1);

	memcpy(result, VARDATA_ANY(tunpacked), len);
	result[len] = '\0';
	return result;
}

text *
cstring_to_text(const char *s)
{
	return (text *) FuzzVarlenaCopy(s, strlen(s));
}

/* ---------------------------------------------------------------------
 * pqformat.c, as in PostgreSQL 15
 * ---------------------------------------------------------------------
 */
void
pq_begintypsend(StringInfo buf)
{
	initStringInfo(buf);
	appendStringInfoCharMacro(buf, '\0');
	appendStringInfoCharMacro(buf, '\0');
	appendStringInfoCharMacro(buf, '\0');
	appendStringInfoCharMacro(buf, '\0');
}

bytea *
pq_endtypsend(StringInfo buf)
{
	bytea	   *result = (bytea *) buf->data;

	SET_VARSIZE(result, buf->len);
	return result;
}

/*
 * From 16 on, heap_form_tuple and tuplestore_putvalues take const pointers
 * (CONST16) and pq_sendbytes a const void * (the headers of 17 and 18 have
 * it so).
 */
#if PG_VERSION_NUM >= 160000
#define CONST16 const
typedef const void *SendBytesData;
#else
#define CONST16
typedef const char *SendBytesData;
#endif

void
pq_sendbytes(StringInfo buf, SendBytesData data, int datalen)
{
	appendBinaryStringInfo(buf, data, datalen);
}

int
pq_getmsgbyte(StringInfo msg)
{
	if (msg->cursor >= msg->len)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("no data left in message")));
	return (unsigned char) msg->data[msg->cursor++];
}

/* a void * from 18 on (17.12's headers: char *, 18.6's: void *) */
#if PG_VERSION_NUM >= 180000
void
pq_copymsgbytes(StringInfo msg, void *buf, int datalen)
#else
void
pq_copymsgbytes(StringInfo msg, char *buf, int datalen)
#endif
{
	if (datalen < 0 || datalen > (msg->len - msg->cursor))
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("insufficient data left in message")));
	memcpy(buf, &msg->data[msg->cursor], datalen);
	msg->cursor += datalen;
}

unsigned int
pq_getmsgint(StringInfo msg, int b)
{
	unsigned int result;
	unsigned char n8;
	uint16		n16;
	uint32		n32;

	switch (b)
	{
		case 1:
			pq_copymsgbytes(msg, (char *) &n8, 1);
			result = n8;
			break;
		case 2:
			pq_copymsgbytes(msg, (char *) &n16, 2);
			result = pg_ntoh16(n16);
			break;
		case 4:
			pq_copymsgbytes(msg, (char *) &n32, 4);
			result = pg_ntoh32(n32);
			break;
		default:
			elog(ERROR, "unsupported integer size %d", b);
			result = 0;
			break;
	}
	return result;
}

int64
pq_getmsgint64(StringInfo msg)
{
	uint64		n64;

	pq_copymsgbytes(msg, (char *) &n64, sizeof(n64));
	return pg_ntoh64(n64);
}

/* ---------------------------------------------------------------------
 * Encodings: UTF8, LATIN1 and SQL_ASCII databases, as mbutils.c and
 * utf8_and_iso8859_1.c treat them
 * ---------------------------------------------------------------------
 */
int
GetDatabaseEncoding(void)
{
	return fuzz_database_encoding;
}

static void
ReportInvalidEncoding(int encoding, const char *mbstr, int len)
{
	ereport(ERROR,
			(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
			 errmsg("invalid byte sequence for encoding \"%s\": 0x%02x",
					pg_enc2name_tbl[encoding].name, (unsigned char) mbstr[0])));
}

char *
pg_server_to_any(const char *s, int len, int encoding)
{
	if (len <= 0)
		return unconstify(char *, s);
	if (encoding == fuzz_database_encoding || encoding == PG_SQL_ASCII)
		return unconstify(char *, s);
	if (fuzz_database_encoding == PG_SQL_ASCII)
	{
		/* pg_verify_mbstr: no conversion, but the bytes must be valid */
		int			ok = pg_encoding_verifymbstr(encoding, s, len);

		if (ok != len)
			ReportInvalidEncoding(encoding, s + ok, len - ok);
		return unconstify(char *, s);
	}
	if (fuzz_database_encoding == PG_LATIN1 && encoding == PG_UTF8)
	{
		/* iso8859_1_to_utf8 */
		const unsigned char *src = (const unsigned char *) s;
		unsigned char *result = palloc((Size) len * MAX_CONVERSION_GROWTH + 1);
		unsigned char *dest = result;

		for (int i = 0; i < len; i++)
		{
			unsigned char c = src[i];

			if (c == 0)
				ReportInvalidEncoding(PG_LATIN1, (const char *) src + i, len - i);
			if (!IS_HIGHBIT_SET(c))
				*dest++ = c;
			else
			{
				*dest++ = (c >> 6) | 0xc0;
				*dest++ = (c & 0x003f) | HIGHBIT;
			}
		}
		*dest = '\0';
		return (char *) result;
	}
	fprintf(stderr, "shim: no conversion from %d to %d\n", fuzz_database_encoding, encoding);
	abort();
}

/* ---------------------------------------------------------------------
 * Arrays: what ndd_colliding needs (bigint arrays, built by the harness)
 * ---------------------------------------------------------------------
 */
int
ArrayGetNItems(int ndim, const int *dims)
{
	int32		ret = 1;

	if (ndim <= 0)
		return 0;
	for (int i = 0; i < ndim; i++)
	{
		int64		prod;

		if (dims[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("array size exceeds the maximum allowed (%d)",
							(int) MaxArraySize)));
		prod = (int64) ret * (int64) dims[i];
		ret = (int32) prod;
		if ((int64) ret != prod || (Size) ret > MaxArraySize)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("array size exceeds the maximum allowed (%d)",
							(int) MaxArraySize)));
	}
	return (int) ret;
}

bool
array_contains_nulls(ArrayType *array)
{
	int			nelems;
	bits8	   *bitmap;
	int			bitmask;

	if (!ARR_HASNULL(array))
		return false;
	nelems = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	bitmap = ARR_NULLBITMAP(array);
	while (nelems >= 8)
	{
		if (*bitmap != 0xFF)
			return true;
		bitmap++;
		nelems -= 8;
	}
	bitmask = 1;
	while (nelems > 0)
	{
		if ((*bitmap & bitmask) == 0)
			return true;
		bitmask <<= 1;
		nelems--;
	}
	return false;
}

/* Only arrays of by-value 8-byte elements (bigint), without nulls. */
ArrayType *
construct_array(Datum *elems, int nelems, Oid elmtype, int elmlen,
				bool elmbyval, char elmalign)
{
	Size		nbytes = ARR_OVERHEAD_NONULLS(1) + (Size) nelems * 8;
	ArrayType  *a;

	if (!elmbyval || elmlen != 8)
	{
		fprintf(stderr, "shim: construct_array of other than bigint\n");
		abort();
	}
	if (nelems == 0)
	{
		a = palloc0(sizeof(ArrayType));
		SET_VARSIZE(a, sizeof(ArrayType));
		a->elemtype = elmtype;
		return a;
	}
	a = palloc0(nbytes);
	SET_VARSIZE(a, nbytes);
	a->ndim = 1;
	a->dataoffset = 0;
	a->elemtype = elmtype;
	ARR_DIMS(a)[0] = nelems;
	ARR_LBOUND(a)[0] = 1;
	for (int i = 0; i < nelems; i++)
	{
		int64		v = DatumGetInt64(elems[i]);

		memcpy(ARR_DATA_PTR(a) + 8 * i, &v, 8);
	}
	return a;
}

/* ---------------------------------------------------------------------
 * Opclass options: the options function's declarations are recorded here,
 * and the harness plays PostgreSQL's parser (values within each option's
 * range, defaults for the rest), then calls the validator.  local_relopts
 * keeps no List; validators get no relopt_value array (ndd's ignore it).
 * ---------------------------------------------------------------------
 */
FuzzRelopt	fuzz_relopts[FUZZ_MAX_RELOPTS];
int			fuzz_nrelopts;
Size		fuzz_relopt_struct_size;
relopts_validator fuzz_relopt_validator;

void
init_local_reloptions(local_relopts *opts, Size relopt_struct_size)
{
	opts->options = NIL;
	opts->validators = NIL;
	opts->relopt_struct_size = relopt_struct_size;
	fuzz_nrelopts = 0;
	fuzz_relopt_struct_size = relopt_struct_size;
	fuzz_relopt_validator = NULL;
}

static FuzzRelopt *
NewRelopt(const char *name, char type, int offset)
{
	FuzzRelopt *r;

	if (fuzz_nrelopts == FUZZ_MAX_RELOPTS)
		abort();
	r = &fuzz_relopts[fuzz_nrelopts++];
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->type = type;
	r->offset = offset;
	return r;
}

void
add_local_int_reloption(local_relopts *opts, const char *name,
						const char *desc, int default_val,
						int min_val, int max_val, int offset)
{
	FuzzRelopt *r = NewRelopt(name, 'i', offset);

	r->int_default = default_val;
	r->int_min = min_val;
	r->int_max = max_val;
}

void
add_local_real_reloption(local_relopts *opts, const char *name,
						 const char *desc, double default_val,
						 double min_val, double max_val, int offset)
{
	FuzzRelopt *r = NewRelopt(name, 'r', offset);

	r->real_default = default_val;
	r->real_min = min_val;
	r->real_max = max_val;
}

void
add_local_enum_reloption(local_relopts *relopts, const char *name,
						 const char *desc, relopt_enum_elt_def *members,
						 int default_val, const char *detailmsg, int offset)
{
	FuzzRelopt *r = NewRelopt(name, 'e', offset);

	r->int_default = default_val;
	r->members = members;
}

void
register_reloptions_validator(local_relopts *opts, relopts_validator validator)
{
	fuzz_relopt_validator = validator;
}

bool
has_fn_opclass_options(FmgrInfo *flinfo)
{
	return fuzz_opclass_options != NULL;
}

bytea *
get_fn_opclass_options(FmgrInfo *flinfo)
{
	if (fuzz_opclass_options == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("operator class options info is absent in function call context")));
	return fuzz_opclass_options;
}

/* ---------------------------------------------------------------------
 * Not reachable from any harness: planner support, selectivity, SRFs,
 * tuples, syscache, aggregates, element arrays
 * ---------------------------------------------------------------------
 */
#define UNREACHABLE(name) \
	do { \
		fprintf(stderr, "shim: %s is not reachable from the fuzz harnesses\n", name); \
		abort(); \
	} while (0)

Oid
GetSysCacheOid(int cacheId, AttrNumber oidcol, Datum key1, Datum key2,
			   Datum key3, Datum key4)
{
	UNREACHABLE("GetSysCacheOid");
}

bool
bms_is_member(int x, const Bitmapset *a)
{
	UNREACHABLE("bms_is_member");
}

bool
contain_volatile_functions(Node *clause)
{
	UNREACHABLE("contain_volatile_functions");
}

Oid
exprType(const Node *expr)
{
	UNREACHABLE("exprType");
}

Oid
get_func_namespace(Oid funcid)
{
	UNREACHABLE("get_func_namespace");
}

Oid
get_opfamily_member(Oid opfamily, Oid lefttype, Oid righttype, int16 strategy)
{
	UNREACHABLE("get_opfamily_member");
}

List *
list_make1_impl(NodeTag t, ListCell datum1)
{
	UNREACHABLE("list_make1_impl");
}

List *
list_make2_impl(NodeTag t, ListCell datum1, ListCell datum2)
{
	UNREACHABLE("list_make2_impl");
}

Expr *
make_opclause(Oid opno, Oid opresulttype, bool opretset,
			  Expr *leftop, Expr *rightop, Oid opcollid, Oid inputcollid)
{
	UNREACHABLE("make_opclause");
}

Relids
pull_varnos(PlannerInfo *root, Node *node)
{
	UNREACHABLE("pull_varnos");
}

bytea	  **
RelationGetIndexAttOptions(Relation relation, bool copy)
{
	UNREACHABLE("RelationGetIndexAttOptions");
}

TupleDesc
BlessTupleDesc(TupleDesc tupdesc)
{
	UNREACHABLE("BlessTupleDesc");
}

Datum
HeapTupleHeaderGetDatum(HeapTupleHeader tuple)
{
	UNREACHABLE("HeapTupleHeaderGetDatum");
}

void
InitMaterializedSRF(FunctionCallInfo fcinfo, bits32 flags)
{
	UNREACHABLE("InitMaterializedSRF");
}

TypeFuncClass
get_call_result_type(FunctionCallInfo fcinfo, Oid *resultTypeId,
					 TupleDesc *resultTupleDesc)
{
	UNREACHABLE("get_call_result_type");
}

HeapTuple
heap_form_tuple(TupleDesc tupleDescriptor, CONST16 Datum *values, CONST16 bool *isnull)
{
	UNREACHABLE("heap_form_tuple");
}

void
tuplestore_putvalues(Tuplestorestate *state, TupleDesc tdesc,
					 CONST16 Datum *values, CONST16 bool *isnull)
{
	UNREACHABLE("tuplestore_putvalues");
}

/*
 * A function of fmgr.c in newer minor releases (15.20's fmgr.h declares it),
 * a macro over pg_detoast_datum in older ones of the same major (15.18's):
 * defined here only where the headers do not define the macro, so that the
 * harnesses build against either.
 */
#ifndef DatumGetHeapTupleHeader
HeapTupleHeader
DatumGetHeapTupleHeader(Datum d)
{
	UNREACHABLE("DatumGetHeapTupleHeader");
}
#endif

Datum
GetAttributeByNum(HeapTupleHeader tuple, AttrNumber attrno, bool *isNull)
{
	UNREACHABLE("GetAttributeByNum");
}

void
deconstruct_array(ArrayType *array, Oid elmtype, int elmlen, bool elmbyval,
				  char elmalign, Datum **elemsp, bool **nullsp, int *nelemsp)
{
	UNREACHABLE("deconstruct_array");
}

void
get_typlenbyvalalign(Oid typid, int16 *typlen, bool *typbyval, char *typalign)
{
	UNREACHABLE("get_typlenbyvalalign");
}

char *
pg_any_to_server(const char *s, int len, int encoding)
{
	UNREACHABLE("pg_any_to_server");
}

Datum
DirectFunctionCall1Coll(PGFunction func, Oid collation, Datum arg1)
{
	UNREACHABLE("DirectFunctionCall1Coll");
}

Datum
DirectFunctionCall2Coll(PGFunction func, Oid collation, Datum arg1, Datum arg2)
{
	UNREACHABLE("DirectFunctionCall2Coll");
}

void
fmgr_info(Oid functionId, FmgrInfo *finfo)
{
	UNREACHABLE("fmgr_info");
}

void
get_join_variables(PlannerInfo *root, List *args, SpecialJoinInfo *sjinfo,
				   VariableStatData *vardata1, VariableStatData *vardata2,
				   bool *join_is_reversed)
{
	UNREACHABLE("get_join_variables");
}

RegProcedure
get_opcode(Oid opno)
{
	UNREACHABLE("get_opcode");
}

bool
get_restriction_variable(PlannerInfo *root, List *args, int varRelid,
						 VariableStatData *vardata, Node **other,
						 bool *varonleft)
{
	UNREACHABLE("get_restriction_variable");
}

double
get_variable_numdistinct(VariableStatData *vardata, bool *isdefault)
{
	UNREACHABLE("get_variable_numdistinct");
}

Datum
hashint8(PG_FUNCTION_ARGS)
{
	UNREACHABLE("hashint8");
}

Datum
hashint8extended(PG_FUNCTION_ARGS)
{
	UNREACHABLE("hashint8extended");
}

double
mcv_selectivity(VariableStatData *vardata, FmgrInfo *opproc, Oid collation,
				Datum constval, bool varonleft, double *sumcommonp)
{
	UNREACHABLE("mcv_selectivity");
}

int
ssup_datum_unsigned_cmp(Datum x, Datum y, SortSupport ssup)
{
	UNREACHABLE("ssup_datum_unsigned_cmp");
}

int
AggCheckCallContext(FunctionCallInfo fcinfo, MemoryContext *aggcontext)
{
	UNREACHABLE("AggCheckCallContext");
}

/* elog.c's: the five-character SQLSTATE of an error code */
char *
unpack_sql_state(int sql_state)
{
	static char buf[12];

	for (int i = 0; i < 5; i++)
	{
		buf[i] = PGUNSIXBIT(sql_state);
		sql_state >>= 6;
	}
	buf[5] = '\0';
	return buf;
}
