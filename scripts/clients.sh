#!/usr/bin/env bash
# Run the client packages' suites (clients/python, clients/node) against a
# throwaway PostgreSQL 15 cluster with ndd installed.  Each client's own
# test.sh installs what it needs, runs its suite against the server the PG*
# variables name, and ends with "N passed, N failed" (or skips with a
# message and "0 passed, 0 failed" when its language runtime is absent).
# Ends with one line: the sum, "N passed, N failed".
set -u
. "$(dirname "$0")/common.sh"

ndd_ensure_packages
ndd_build_install
ndd_cluster_start

passed=0
failed=0
for client in python node; do
	script=$NDD_TOP/clients/$client/test.sh
	[ -f "$script" ] || continue
	say "the $client client"
	out=$NDD_TMP/$client.log
	bash "$script" 2>&1 | tee "$out"
	# a suite that did not get as far as its tally counts as one failure
	tally=$(tail -n 1 "$out" | grep -xE '[0-9]+ passed, [0-9]+ failed')
	[ -n "$tally" ] || tally="0 passed, 1 failed"
	passed=$((passed + ${tally%% *}))
	tally=${tally#*, }
	failed=$((failed + ${tally%% *}))
done
echo "$passed passed, $failed failed"
