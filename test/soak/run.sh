#!/usr/bin/env bash
# The long form of the soak test (test/t/013_soak.pl): 1,000,000 documents,
# 8 clients for 10 minutes, one immediate stop of the primary halfway.  The
# test command runs its short form (100,000 documents for 60 s).
#
#   bash test/soak/run.sh                        # PostgreSQL 15, the long form
#   bash test/soak/run.sh NDD_SOAK_SECONDS=1800  # half an hour
#   bash test/soak/run.sh NDD_SOAK_DOCS=100000 NDD_SOAK_SECONDS=60   # the short form
#   bash -c '. scripts/common.sh; ndd_run_major 18 soak test/soak/run.sh NDD_SOAK_SECONDS=60'
#
# Settings are taken from the environment or as NAME=VALUE arguments (which
# reach a chroot, where ndd_run_major passes no environment).
# Builds and installs ndd (as scripts/test.sh does), runs the test from a
# copy of the tree and prints its output, which ends with every invariant as
# an "ok" line and the operations, throughput and timings as "#" lines; the
# copy, with the servers' logs and the clients' logs, is kept in the
# /tmp/ndd-soak-* directory it names.  Environment, with the long form's
# defaults:
#   NDD_SOAK_DOCS=1000000      documents (three quarters in docs)
#   NDD_SOAK_SECONDS=600       how long the clients run
#   NDD_SOAK_CLIENTS=8         clients
#   NDD_SOAK_SAMPLES=20        sample lookups and top-k searches checked
#   NDD_SOAK_SHARED_BUFFERS=1GB
#   NDD_SOAK_OP_TIMEOUT=1800   seconds a client waits for one statement
# A 10-minute run at 1M documents takes about an hour on 2 cores: most of
# it loads the documents and builds the indexes and the clusters.
set -u
for setting in "$@"; do
	case $setting in
	NDD_SOAK_*=* | PG_TEST_TIMEOUT_DEFAULT=* | PGCTLTIMEOUT=*) export "${setting?}" ;;
	*) echo "usage: $0 [NDD_SOAK_NAME=VALUE ...]" >&2; exit 2 ;;
	esac
done
. "$(dirname "$0")/../../scripts/common.sh"

export NDD_SOAK_DOCS=${NDD_SOAK_DOCS:-1000000}
export NDD_SOAK_SECONDS=${NDD_SOAK_SECONDS:-600}
export NDD_SOAK_CLIENTS=${NDD_SOAK_CLIENTS:-8}
export NDD_SOAK_SAMPLES=${NDD_SOAK_SAMPLES:-20}
export NDD_SOAK_SHARED_BUFFERS=${NDD_SOAK_SHARED_BUFFERS:-1GB}
export NDD_SOAK_OP_TIMEOUT=${NDD_SOAK_OP_TIMEOUT:-1800}
# waits of PostgreSQL::Test (catch-up, polls) and of pg_ctl (crash recovery)
export PG_TEST_TIMEOUT_DEFAULT=${PG_TEST_TIMEOUT_DEFAULT:-3600}
export PGCTLTIMEOUT=${PGCTLTIMEOUT:-3600}

ndd_ensure_packages
ndd_build_install

work=$(mktemp -d /tmp/ndd-soak-XXXXXX)
chmod 755 "$work"
ndd_copy_tree "$work/tree" || exit 1
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
say "soak: $NDD_SOAK_DOCS documents, $NDD_SOAK_CLIENTS clients for $NDD_SOAK_SECONDS s, in $work"
ndd_as_owner env PATH="$PATH" make -C "$work/tree" -s installcheck PG_CONFIG="$PG_CONFIG" \
	REGRESS= ISOLATION= ENCODING_TESTS= PROVE_TESTS=test/t/013_soak.pl PROVE_FLAGS=-v 2>&1 |
	tee "$work/soak.log"
status=${PIPESTATUS[0]}
say "output in $work/soak.log, the servers' logs in $work/tree/tmp_check/log"
exit "$status"
