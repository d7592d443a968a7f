#!/usr/bin/env bash
# The ndd demo: build and install ndd, start a throwaway PostgreSQL 15
# cluster, load every Debian copyright file, and print the near-duplicate
# groups ndd finds with the SQL that finds them.  The cluster is removed.
set -u
. "$(dirname "$0")/common.sh"

ndd_ensure_packages
ndd_build_install
ndd_cluster_start
psql -X -q -v ON_ERROR_STOP=1 -f "$NDD_TOP/scripts/demo.sql"
