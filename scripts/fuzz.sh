#!/usr/bin/env bash
# Build the libFuzzer harnesses of test/fuzz with Debian's clang and run each
# for SECONDS_PER_HARNESS (default 60), or for NDD_FUZZ_RUNS executions if
# that is set, one after the other.  Prints per harness: executions, exec/s,
# coverage, crashes.  Exits non-zero if any harness crashed, leaked, timed
# out or a sanitizer reported.
#
#   bash scripts/fuzz.sh [SECONDS_PER_HARNESS]
#   NDD_FUZZ_RUNS=10000000 bash scripts/fuzz.sh
#   NDD_FUZZ_ONLY="fuzz_shingle fuzz_options" bash scripts/fuzz.sh 30
#
# NDD_FUZZ_DIR: the scratch directory (build, working corpora, reproducers);
# a new one under /tmp by default.  The seed corpora in test/fuzz/corpus are
# copied there and never written to.
set -u
. "$(dirname "$0")/common.sh"

seconds=${1:-60}
case $seconds in '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_HARNESS]" >&2; exit 2 ;; esac

NDD_PACKAGES="postgresql-server-dev-$PGVER libxxhash-dev" ndd_ensure_packages clang libclang-rt-14-dev

CC=${NDD_FUZZ_CC:-clang}
dir=${NDD_FUZZ_DIR:-$(mktemp -d /tmp/ndd-fuzz-XXXXXX)}
build=$dir/build
mkdir -p "$build" "$dir/crashes"
fuzz=$NDD_TOP/test/fuzz
harnesses=${NDD_FUZZ_ONLY:-$(cd "$fuzz" && ls fuzz_*.c | sed 's/\.c$//')}

# the real src files the harnesses call, and what they need of the backend
srcs="text/shingle text/shingle_set text/shingle_group base/sort_uint64 base/radix_sort sketch/minhash sketch/weighted_minhash sketch/minhash_bbit sketch/simhash keys/key_filter keys/lsh keys/simhash_keys index/minhash_gin index/simhash_gin"
cflags="-g -O1 -fno-omit-frame-pointer -Wno-ignored-attributes -fsanitize=address,undefined -fno-sanitize-recover=all"
incs="-I$($PG_CONFIG --includedir-server) -I/usr/include -I$NDD_TOP/src -I$fuzz"
libs="$($PG_CONFIG --pkglibdir)/libpgcommon.a $($PG_CONFIG --pkglibdir)/libpgport.a -lm"

say "building the harnesses in $build"
objs=
for f in $srcs; do
	$CC $cflags -fsanitize=fuzzer-no-link $incs -c "$NDD_TOP/src/$f.c" -o "$build/${f#*/}.o" || exit 1
	objs="$objs $build/${f#*/}.o"
done
$CC $cflags -fsanitize=fuzzer-no-link $incs -c "$fuzz/pg_shim.c" -o "$build/pg_shim.o" || exit 1
for h in $harnesses; do
	$CC $cflags -fsanitize=fuzzer $incs "$fuzz/$h.c" $objs "$build/pg_shim.o" \
		-Wl,--wrap=unicode_normalize $libs -o "$build/$h" || exit 1
done

# libFuzzer's -max_len per harness (NDD_FUZZ_MAX_LEN for all): long enough
# for what they parse.  fuzz_shingle's seeds include tokens longer than the
# 16 kB at which the tokenizer cuts them, but inputs that long run at a few
# hundred per second, so its default is 4096: NDD_FUZZ_MAX_LEN=20000 for a
# run that mutates them.
max_len() {
	if [ -n "${NDD_FUZZ_MAX_LEN:-}" ]; then
		echo "$NDD_FUZZ_MAX_LEN"
		return
	fi
	case $1 in
	fuzz_key_filter) echo 32768 ;;	# valid filters and states: 16 and 24 kB
	fuzz_shingle_set) echo 1024 ;;	# sets of up to 511 hashes, and their growth
	*) echo 4096 ;;
	esac
}

if [ -n "${NDD_FUZZ_RUNS:-}" ]; then
	limit="-runs=$NDD_FUZZ_RUNS"
else
	limit="-max_total_time=$seconds"
fi
# NDD_FUZZ_SEED: libFuzzer's -seed, for a run that mutates the same way each
# time (0, the default, draws one)
limit="$limit -seed=${NDD_FUZZ_SEED:-0}"

failed=0
summary=
for h in $harnesses; do
	work=$dir/corpus/$h
	mkdir -p "$work"
	[ -d "$fuzz/corpus/$h" ] && cp -r "$fuzz/corpus/$h/." "$work/"
	log=$dir/$h.log
	say "running $h ($limit)"
	"$build/$h" $limit -max_len="$(max_len "$h")" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$dir/crashes/$h-" "$work" >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
	crashes=$(ls "$dir/crashes" 2>/dev/null | grep -c "^$h-")
	line=$(printf '%-20s %12s execs %8s exec/s  %-22s crashes: %s' \
		"$h" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$crashes")
	if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		failed=$((failed + 1))
		line="$line  FAILED (exit $status, log $log)"
		grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|property failed|shim:' "$log" >&2
	fi
	summary="$summary$line"$'\n'
done

printf '%s' "$summary"
total=$(echo $harnesses | wc -w)
if [ "$failed" -ne 0 ]; then
	echo "$failed harness(es) failed; reproducers:" >&2
	ls -1 "$dir"/crashes/* >&2
	echo "$((total - failed)) passed, $failed failed"
	exit 1
fi
echo "no crashes (scratch directory: $dir)"
echo "$total passed, 0 failed"
