#!/usr/bin/env bash
# Run the whole test suite (scripts/test.sh: pg_regress, the encoding
# suites, isolation, TAP) against ndd built with AddressSanitizer and
# UndefinedBehaviorSanitizer, and report what the sanitizers found.
#
# Debian's PostgreSQL is not instrumented, and ndd.so is dlopen'ed, so the
# sanitizer runtimes must be in every server process from its start: the
# suite runs against a relocated copy of PostgreSQL 15 (made here, removed at
# the end) whose bin/postgres is a wrapper that sets LD_PRELOAD (the runtimes
# and a shim that makes them work in Debian's postgres, see below),
# ASAN_OPTIONS and UBSAN_OPTIONS and execs the real binary.  Only server processes (and
# what they start) load the runtimes; pg_regress, psql, perl and make do not.
# Every cluster initdb makes from the copy (the suite's, the TAP tests') gets
# jit = off, so that ndd's code runs from the sanitized ndd.so, never from
# uninstrumented bitcode inlined by the JIT.
#
# ndd is built in a copy of the tree, so no sanitized object is left in the
# checkout.  Before the suite a self-check proves that the build and the
# server are sanitized: ndd.so references __asan_init and __ubsan_handle_*, a
# backend that ran ndd has libasan and ndd.so mapped, and a probe function
# with a deliberate heap overflow and an undefined shift, loaded into a
# backend, leaves both reports, with their stacks, in the log directory and
# the backend alive.
#
# The sanitizers continue after a report (-fsanitize-recover=address,
# halt_on_error=0), so one run lists every report; leak detection is off
# (PostgreSQL frees by memory context).  ASan sees malloc'd memory (each
# palloc block, not each chunk), the stack and globals; UBSan sees ndd's
# code, including PostgreSQL's inline functions and macros it uses.
#
# Ends with the suite's line "N passed, N failed" and
# "sanitizer: N reports in ndd, M elsewhere"; exits non-zero if the suite
# failed or any report has a frame in ndd's code.  The logs stay in the
# directory the script names (NDD_SAN_KEEP=1 also keeps the PostgreSQL copy
# and the build tree).
set -u
. "$(dirname "$0")/common.sh"

fail() { echo "sanitize.sh: $*" >&2; exit 1; }

ndd_ensure_packages libasan8 libubsan1 binutils

SAN_CFLAGS="-fsanitize=address,undefined -fsanitize-recover=address -fno-omit-frame-pointer -g -DUSE_ASSERT_CHECKING"
SAN_LDFLAGS="-fsanitize=address,undefined"

out=$(mktemp -d /tmp/ndd-san-XXXXXX)
chmod 755 "$out"
scratch=$out/scratch
logs=$out/logs
mkdir -p "$scratch" "$logs"
[ "$(id -u)" -eq 0 ] && chown postgres: "$logs"
cleanup() {
	[ -n "${san_lock:-}" ] && rm -f "$san_lock"	# test.sh's install lock for the copy
	[ "${NDD_SAN_KEEP:-0}" = 1 ] || rm -rf "$scratch"
}
trap cleanup EXIT

# --- the sources: what git tracks, plus new files it does not ignore
tree=$scratch/tree
say "copying the tree to $tree"
ndd_copy_tree "$tree" || fail "cannot copy the tree"

# --- a PostgreSQL 15 of our own, copied from $PGBIN's installation without
# any ndd; its binaries find share/, lib/ and include/ relative to bin/
src_root=$(cd "$PGBIN/../../../../.." && pwd)
root=$scratch/pg
say "copying PostgreSQL $PGVER from ${src_root%/}/usr to $root"
mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/usr/include" "$root/usr/lib/x86_64-linux-gnu"
cp -a "$src_root/usr/lib/postgresql/$PGVER" "$root/usr/lib/postgresql/" &&
	cp -a "$src_root/usr/share/postgresql/$PGVER" "$root/usr/share/postgresql/" &&
	cp -a "$src_root/usr/include/postgresql" "$root/usr/include/" ||
	fail "cannot copy PostgreSQL $PGVER"
rm -rf "$root/usr/lib/postgresql/$PGVER/lib/ndd.so" "$root/usr/lib/postgresql/$PGVER/lib/bitcode/ndd" \
	"$root/usr/lib/postgresql/$PGVER/lib/bitcode/ndd.index.bc" "$root/usr/share/postgresql/$PGVER/extension"/ndd[.-]*
rootp=$(cd "$root" && pwd -P)
PGBIN=$rootp/usr/lib/postgresql/$PGVER/bin
PG_CONFIG=$PGBIN/pg_config
export NDD_PGBIN=$PGBIN
san_lock=/tmp/ndd-install$(echo "$NDD_PGBIN" | tr / _).lock
[ "$($PG_CONFIG --bindir)" = "$PGBIN" ] &&
	[ "$($PG_CONFIG --pkglibdir)" = "$rootp/usr/lib/postgresql/$PGVER/lib" ] &&
	[ "$($PG_CONFIG --sharedir)" = "$rootp/usr/share/postgresql/$PGVER" ] &&
	[ "$($PG_CONFIG --includedir-server)" = "$rootp/usr/include/postgresql/$PGVER/server" ] ||
	fail "the copy's pg_config points elsewhere: $($PG_CONFIG --pkglibdir) $($PG_CONFIG --sharedir)"
printf '\n# sanitize.sh: ndd runs from the sanitized ndd.so, never as JIT-inlined bitcode\njit = off\n' \
	>>"$root/usr/share/postgresql/$PGVER/postgresql.conf.sample"

# --- build and install the sanitized ndd into the copy
say "building ndd with $SAN_CFLAGS"
export PG_CFLAGS=$SAN_CFLAGS PG_LDFLAGS=$SAN_LDFLAGS
make -C "$tree" -s PG_CONFIG="$PG_CONFIG" PG_CFLAGS="$PG_CFLAGS" >"$out/build.log" 2>&1 &&
	make -C "$tree" -s install PG_CONFIG="$PG_CONFIG" >>"$out/build.log" 2>&1 ||
	{ cat "$out/build.log" >&2; fail "the sanitized build failed"; }
so=$($PG_CONFIG --pkglibdir)/ndd.so

# ndd.so must be instrumented; its runtimes are the ones the server preloads
check_instrumented() {
	nm -D --undefined-only "$so" | grep -qw __asan_init &&
		nm -D --undefined-only "$so" | grep -q '__ubsan_handle_' ||
		fail "$so is not instrumented (no __asan_init or __ubsan_handle_* reference)"
}
check_instrumented
runtime() { ldd "$so" | awk -v lib="$1" '$1 ~ "^"lib"\\.so" { print $3 }'; }
asan_rt=$(runtime libasan)
ubsan_rt=$(runtime libubsan)
[ -f "$asan_rt" ] && [ -f "$ubsan_rt" ] || fail "cannot find the runtimes ndd.so needs: '$asan_rt' '$ubsan_rt'"
say "runtimes: $asan_rt $ubsan_rt"

# --- the server wrapper: every postgres process (postmaster, backends,
# initdb's bootstrap, single-user mode) starts with the runtimes loaded.
# argv[0] stays the wrapper's path, so postgres finds share/ and lib/ as
# before; exec keeps the pid, so pg_ctl and the TAP tests signal the server.
# The shim, preloaded between the runtimes, fixes three things:
# - They initialise at the first malloc, which in a server is inside a
#   library constructor holding a libc lock (libgpg-error's bindtextdomain,
#   p11-kit's newlocale).  Their init looks up swift_demangle and calls
#   dlerror(), whose message translation takes that lock again and leaves it
#   broken: the process hangs in main().  With the symbol defined (it
#   demangles nothing) dlerror() has nothing to translate.
# - UBSan reads its options when it first reports, from /proc/self/environ,
#   which PostgreSQL has overwritten with the process title by then: the
#   shim, ahead of libubsan, gives them through __ubsan_default_options.
# - gcc's libubsan sets its log path through __sanitizer_set_report_path,
#   which resolves to libasan's copy: its own reports would go to stderr (the
#   server log).  The shim calls libubsan's own with NDD_UBSAN_LOG_PATH;
#   UBSAN_OPTIONS' log_path is ASan's, so what libubsan passes to libasan
#   changes nothing.
cat >"$scratch/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

char	   *swift_demangle(const char *name, size_t len, char *buf, size_t *size, uint32_t flags);

/* Demangle nothing: the sanitizers then keep the name as it is */
char *
swift_demangle(const char *name, size_t len, char *buf, size_t *size, uint32_t flags)
{
	return NULL;
}

/*
 * UBSan reads its options at its first report, from /proc/self/environ,
 * which PostgreSQL has overwritten with the process title by then: give
 * them from environ, which PostgreSQL moved and kept
 */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	const char *options = getenv("UBSAN_OPTIONS");

	return options ? options : "";
}

/* Send libubsan's reports to NDD_UBSAN_LOG_PATH.<pid> */
__attribute__((constructor)) static void
ubsan_log_path(void)
{
	const char *path = getenv("NDD_UBSAN_LOG_PATH");
	void	   *h = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
	void		(*set) (const char *);

	if (path == NULL || h == NULL)
		return;
	set = (void (*) (const char *)) dlsym(h, "__sanitizer_set_report_path");
	if (set != NULL)
		set(path);
}
EOF
gcc -O2 -fPIC -shared -o "$scratch/shim.so" "$scratch/shim.c" -ldl || fail "cannot build the shim"
ASAN_OPTS="detect_leaks=0:halt_on_error=0:abort_on_error=0:detect_stack_use_after_return=0:allocator_may_return_null=1:handle_abort=1:print_summary=1:log_path=$logs/asan"
UBSAN_OPTS="print_stacktrace=1:halt_on_error=0:report_error_type=1:log_path=$logs/asan"
mv "$PGBIN/postgres" "$PGBIN/postgres.bin" || fail "cannot move the server binary"
cat >"$PGBIN/postgres" <<EOF
#!/bin/bash
# scripts/sanitize.sh: run PostgreSQL with ndd's sanitizer runtimes
export LD_PRELOAD="$asan_rt $scratch/shim.so $ubsan_rt\${LD_PRELOAD:+ \$LD_PRELOAD}"
export ASAN_OPTIONS="$ASAN_OPTS"
export UBSAN_OPTIONS="$UBSAN_OPTS"
export NDD_UBSAN_LOG_PATH="$logs/ubsan"
exec -a "\$0" "\${0%/*}/postgres.bin" "\$@"
EOF
chmod 755 "$PGBIN/postgres"

# --- scan: every report in $1's logs, those with a frame in ndd's code first.
# A report is an ASan "ERROR:" through its SUMMARY line, or a UBSan
# "runtime error:" line with its notes and stack, up to a blank line.  Prints
# the reports and, last, the line "<in ndd> <elsewhere>".
scan_reports() {
	perl -e '
		my ($dir, $ours) = @ARGV;
		my (@ndd, @other);
		for my $f (sort glob("$dir/*")) {
			open my $fh, "<", $f or next;
			my ($cur, $kind);
			my $flush = sub {
				return unless defined $cur;
				my $r = "--- $f\n$cur";
				if ($r =~ /$ours/m) { push @ndd, $r } else { push @other, $r }
				undef $cur;
			};
			while (my $l = <$fh>) {
				if ($l =~ /ERROR: (Address|Leak|UndefinedBehavior)Sanitizer/) {
					$flush->(); $cur = $l; $kind = "asan"; next;
				}
				if ($l =~ /runtime error:/) {
					$flush->(); $cur = $l; $kind = "ubsan"; next;
				}
				next unless defined $cur;
				if ($kind eq "asan") {
					$cur .= $l;
					$flush->() if $l =~ /^SUMMARY: /;
				} elsif ($l =~ /^\s*$/) {
					$flush->();
				} else {
					$cur .= $l;
				}
			}
			$flush->();
		}
		if (@ndd) { print "=== reports in ndd\n", @ndd }
		if (@other) { print "=== reports elsewhere\n", @other }
		printf "%d %d\n", scalar @ndd, scalar @other;
	' "$1" "$2"
}
# a frame in ndd.so or in ndd's sources
NDD_FRAMES='(/ndd\.so\b|(^|[\s/(])src/([a-z]+/)?[a-z_]+\.[ch]:\d)'

# --- self-check: a backend runs sanitized ndd, and a report lands in $logs
say "self-check: a backend with the runtimes, ndd.so and a probe"
cat >"$scratch/probe.c" <<'EOF'
#include "postgres.h"
#include "fmgr.h"
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(ndd_sanitize_probe);
/* One heap overflow and one undefined shift, for the sanitizers to report */
Datum
ndd_sanitize_probe(PG_FUNCTION_ARGS)
{
	volatile int n = PG_GETARG_INT32(0);
	char	   *p = malloc(n);
	int			r = p[n];

	r += 1 << (n * 8);
	free(p);
	PG_RETURN_INT32(r);
}
EOF
gcc $SAN_CFLAGS -fPIC -shared -I"$($PG_CONFIG --includedir-server)" -o "$scratch/probe.so" "$scratch/probe.c" ||
	fail "cannot build the probe"
chmod 755 "$scratch" "$scratch/probe.so"
ndd_cluster_start
trap 'ndd_cluster_stop; cleanup' EXIT
check=$("$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 2>&1 <<EOF
CREATE EXTENSION ndd;
SELECT round(similarity(minhash_sketch('a b c d e f g h'), minhash_sketch('a b c d e f g x'))::numeric, 2) IS NOT NULL;
SELECT pg_backend_pid() AS pid \gset
\setenv NDD_PID :pid
\! grep -c '$asan_rt' /proc/\$NDD_PID/maps | sed 's/^[1-9][0-9]*$/asan mapped/'
\! grep -c '$so' /proc/\$NDD_PID/maps | sed 's/^[1-9][0-9]*$/ndd mapped/'
CREATE FUNCTION ndd_sanitize_probe(int) RETURNS int AS '$scratch/probe.so' LANGUAGE C STRICT;
SELECT ndd_sanitize_probe(4) IS NOT NULL;
SELECT 'alive';
EOF
)
[ "$(echo $check)" = "t asan mapped ndd mapped t alive" ] ||
	{ echo "$check" >&2; fail "the backend is not sanitized as expected (see above)"; }
ndd_cluster_stop
trap cleanup EXIT
probe=$(scan_reports "$logs" 'ndd_sanitize_probe')
[ "$(echo "$probe" | tail -n 1)" = "2 0" ] &&
	echo "$probe" | grep -q 'heap-buffer-overflow' && echo "$probe" | grep -q 'runtime error: shift' ||
	{ echo "$probe" >&2; fail "the probe's two reports are not in $logs"; }
mkdir -p "$out/probe" && mv "$logs"/* "$out/probe"/
say "self-check passed: ndd.so instrumented, runtimes mapped, the probe's reports logged"

# --- the whole suite, from the copy of the tree, against the wrapped server
say "running scripts/test.sh (sanitized); output in $out/suite.log"
bash "$tree/scripts/test.sh" 2>&1 | tee "$out/suite.log"
status=${PIPESTATUS[0]}
check_instrumented	# test.sh installed the same sanitized build

reports=$(scan_reports "$logs" "$NDD_FRAMES")
counts=$(echo "$reports" | tail -n 1)
echo "$reports" | sed '$d' >"$out/reports.txt"
in_ndd=${counts% *}
elsewhere=${counts#* }
[ -s "$out/reports.txt" ] && cat "$out/reports.txt"
say "took ${SECONDS}s; sanitizer logs in $logs, reports in $out/reports.txt"
grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/suite.log" | tail -n 1 ||
	echo "the suite did not finish"
echo "sanitizer: $in_ndd reports in ndd, $elsewhere elsewhere"
[ "$status" -eq 0 ] && [ "$in_ndd" -eq 0 ]
