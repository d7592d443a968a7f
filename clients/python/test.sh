#!/bin/sh
# Tests of ndd's Python client against the server named by PGHOST, PGPORT,
# PGUSER and PGDATABASE (a database where ndd may be created).
#
# Uses Debian's /usr/bin/python3 and its packages (python3-psycopg,
# python3-psycopg2, python3-sqlalchemy, python3-django, python3-pytest),
# installing the missing ones with apt-get.  The last line of the output is
# "N passed, N failed" (errors and skips count as failed).  Exit status 0 when
# nothing failed.

cd "$(dirname "$0")" || exit 1
PYTHON=/usr/bin/python3
PACKAGES="python3-psycopg python3-psycopg2 python3-sqlalchemy python3-django python3-pytest"

if [ ! -x "$PYTHON" ]; then
    echo "skipping the Python client's tests: $PYTHON is not installed"
    echo "0 passed, 0 failed"
    exit 0
fi

missing=""
for package in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $package"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then
        echo "not root: cannot apt-get install$missing" >&2
    else
        # the package lists may be missing or stale: update once, then retry
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing ||
            { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing; }
    fi
fi
echo "tested with:"
dpkg-query -W -f='  ${Package} ${Version}\n' python3 $PACKAGES 2>/dev/null

log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
# no __pycache__ left in the tree (CI runs as root), no .pytest_cache (pytest.ini)
PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -m pytest -ra 2>&1 | tee "$log"

# pytest's summary, e.g. "=== 2 failed, 70 passed, 1 skipped, 1 error in 3.1s ==="
summary=$(grep -E '^=+ .*(passed|failed|error|skipped|no tests ran).* in [0-9.]+s' "$log" | tail -n 1)
if [ -z "$summary" ]; then
    echo "pytest did not run to its summary"
    echo "0 passed, 1 failed"
    exit 1
fi
count() {
    echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0
}
passed=$(count passed)
failed=$(( $(count failed) + $(count 'errors?') + $(count skipped) ))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
