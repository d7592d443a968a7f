#!/usr/bin/env bash
# Run every ndd test suite (pg_regress, isolation, TAP) against a throwaway
# cluster of one PostgreSQL major: NDD_PG (15 when unset).  Ends with one
# line: "N passed, N failed".  scripts/test_all.sh runs it on every major.
set -u
. "$(dirname "$0")/common.sh"

ndd_ensure_packages
ndd_build_install
ndd_cluster_start

# pg_regress and TAP write into the tree: run them in a copy the cluster's
# owner can write to.
work=$NDD_TMP/tree
mkdir -p "$work"
(cd "$NDD_TOP" && tar --exclude=.git --exclude=results -cf - .) | tar -xf - -C "$work"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"

passed=0
failed=0
log=$NDD_TMP/suite.log

# run_suite NAME TARGET MAKE-ARGS...: one make target (installcheck with
# only that suite, or installcheck-encodings)
run_suite() {
	local name=$1 target=$2
	shift 2
	say "running $name tests"
	ndd_as_owner env PATH="$PATH" PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
		make -C "$work" -s "$target" PG_CONFIG="$PG_CONFIG" "$@" >"$log" 2>&1
	local status=$?
	if [ "$name" = tap ] && [ "$status" -eq 0 ]; then
		grep -vE '^#' "$log"	# the diagnostics only when something failed
	else
		cat "$log"
	fi
	local ok bad
	if [ "$name" = tap ]; then
		ok=$(grep -cE '^ *ok [0-9]+' "$log")
		bad=$(grep -cE '^ *not ok [0-9]+' "$log")
	else
		# pg_regress up to 15 prints "test name ... ok", from 16 on TAP-style
		# "ok 3 - name" ("+" instead of "-" in a parallel group)
		ok=$(grep -cE '\.\.\. ok |^ok [0-9]+ +[-+] ' "$log")
		bad=$(grep -cE '\.\.\. FAILED|^not ok [0-9]+ +[-+] ' "$log")
	fi
	if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
		bad=1			# the suite itself broke
	fi
	if [ "$name" = tap ] && [ "$bad" -gt 0 ]; then
		# the servers' logs of each failed test, gone with the tree otherwise
		for t in $(sed -n '/^Test Summary Report/,$p' "$log" | grep -oE 't/[0-9]+_[a-z_]+' | sort -u); do
			for f in "$work"/tmp_check/log/*"${t#t/}"*; do
				[ -f "$f" ] && { echo "== $f (last 60 lines)"; tail -n 60 "$f"; }
			done
		done
	fi
	[ -f "$work/regression.diffs" ] && [ "$bad" -gt 0 ] && cat "$work/regression.diffs"
	for f in "$work"/output_*/regression.diffs; do
		[ -f "$f" ] && [ "$bad" -gt 0 ] && cat "$f"
	done
	passed=$((passed + ok))
	failed=$((failed + bad))
}

# every file of test/sql: the UTF-8 suites, then those that need a LATIN1
# or SQL_ASCII database (installcheck-encodings); the isolation specs; TAP
run_suite regress installcheck ISOLATION= TAP_TESTS= ENCODING_TESTS=
run_suite encoding installcheck-encodings
if grep -qE '^ISOLATION *=' "$work/Makefile"; then
	run_suite isolation installcheck REGRESS= TAP_TESTS= ENCODING_TESTS=
fi
if ls "$work"/test/t/*.pl >/dev/null 2>&1; then
	run_suite tap installcheck REGRESS= ISOLATION= ENCODING_TESTS= PROVE_FLAGS=-v
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
