#!/usr/bin/env bash
# Test ndd-pg, the Node.js client, against the server that PGHOST, PGPORT,
# PGUSER and PGDATABASE name (ndd is created there if it is missing).
# Installs the dev dependencies (npm ci) when node_modules is missing.
# Ends with one line: "N passed, N failed".
set -u
case $0 in
*/*) cd "${0%/*}" || { echo "0 passed, 1 failed"; exit 1; } ;;
esac

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "node or npm not found: skipping the Node.js client tests"
	echo "0 passed, 0 failed"
	exit 0
fi

if [ ! -d node_modules ]; then
	echo "installing the dev dependencies (npm ci)"
	if [ -f package-lock.json ]; then
		npm ci --no-audit --no-fund >npm.log 2>&1
	else
		npm install --no-audit --no-fund >npm.log 2>&1
	fi
	status=$?
	if [ "$status" -ne 0 ]; then
		cat npm.log
		rm -f npm.log
		echo "npm could not install the dev dependencies"
		echo "0 passed, 1 failed"
		exit 1
	fi
	rm -f npm.log
fi

echo "node $(node --version), pg $(node -p "require('pg/package.json').version" 2>/dev/null || echo '?'), server ${PGHOST:-localhost}:${PGPORT:-5432}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# a hung connection must not hang the caller: 10 minutes at most (the suite
# takes seconds)
limit=
command -v timeout >/dev/null 2>&1 && limit="timeout ${NDD_NODE_TEST_TIMEOUT:-600}"
$limit node --test --test-concurrency=1 --test-reporter=tap test/*.test.js >"$log" 2>&1
status=$?
cat "$log"

# the summary the TAP reporter ends with: "# pass N", "# fail N", "# cancelled N"
count() { sed -n "s/^# $1 \([0-9][0-9]*\)\$/\1/p" "$log" | tail -n 1; }
pass=$(count pass)
fail=$(count fail)
cancelled=$(count cancelled)
if [ -z "$pass" ] || [ -z "$fail" ]; then
	echo "the test runner did not report its counts"
	echo "0 passed, 1 failed"
	exit 1
fi
failed=$((fail + ${cancelled:-0}))
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1	# the runner itself broke
fi
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
