#!/usr/bin/env bash
# Citus for ndd, on this machine: build Citus from its release tarball for a
# PostgreSQL major, and start or stop a coordinator and two workers with ndd
# and Citus installed, as the unprivileged postgres user.
#
#   bash scripts/citus.sh build    # build and install Citus (cached)
#   bash scripts/citus.sh start    # build, then a coordinator and two workers
#   bash scripts/citus.sh stop     # stop them and remove their directory
#   bash scripts/citus.sh tarball  # the tarball it would build; fails when there is none
#
# NDD_PG: the major (18 by default).  Citus 14 supports PostgreSQL 16 to 18;
# where Debian does not ship the major here, everything happens in its
# Debian chroot (scripts/common.sh: 17 in trixie, 18 in sid; NDD_CHROOT_DIR),
# which needs root, as scripts/test_all.sh does.  NDD_CITUS_TARBALL: the
# release tarball (by default citus-14.0.1.tar.xz in ../shared/deps beside
# the checkout, wherever the checkout is); Citus is not packaged by Debian.
# Without it, build and start stop with an error that says where to put it.
#
# The build (a few minutes) is kept in /var/cache/ndd-citus, keyed by the
# tarball's checksum and the exact PostgreSQL version, and installing it
# again is a copy: a second run does not compile (the compile takes about
# 40 s on 2 cores, without LLVM bitcode).  The servers run with
# citus.enable_statistics_collection = off.
#
# The clusters live in /tmp/ndd-citus (inside the chroot: under
# $NDD_CHROOT_DIR/<suite>/tmp/ndd-citus here) and listen on that directory's
# Unix socket only, on ports 54411 (coordinator), 54412 and 54413 (workers).
set -uo pipefail
export NDD_PG=${NDD_PG:-18}
. "$(dirname "$0")/common.sh"

citus_default_tarball=$(cd "$NDD_TOP/.." && pwd)/shared/deps/citus-14.0.1.tar.xz
NDD_CITUS_TARBALL=${NDD_CITUS_TARBALL:-$citus_default_tarball}
NDD_CITUS_DIR=/tmp/ndd-citus
cache_top=/var/cache/ndd-citus
ports=(54411 54412 54413)
names=(coordinator worker1 worker2)

usage() { echo "usage: $0 build|start|stop|tarball" >&2; exit 2; }

# Stop unless the tarball $1 is there, saying where it was looked for.
need_tarball() {
	[ -f "$1" ] && return 0
	echo "no Citus tarball at $1" >&2
	echo "Put Citus's release tarball (citus-14.0.1.tar.xz) in ../shared/deps beside the checkout, or name it with NDD_CITUS_TARBALL=/path/to/citus-X.Y.Z.tar.xz." >&2
	exit 1
}

# In the chroot of the major, when Debian does not ship it here: the tarball
# is copied into the chroot's cache, and this script runs there on a copy
# of the tree (ndd_run_major), with the tarball's path inside.
in_major() {
	local sub=$1 suite
	[ "$sub" = stop ] || need_tarball "$NDD_CITUS_TARBALL"
	suite=$(ndd_suite_of "$PGVER") || { echo "no Debian suite known for PostgreSQL $PGVER" >&2; exit 1; }
	if [ "$suite" = host ]; then
		"$sub-here" "$NDD_CITUS_TARBALL"
		return
	fi
	[ "$(id -u)" -eq 0 ] || { echo "PostgreSQL $PGVER runs in a Debian chroot here, which needs root: sudo bash $0 $sub" >&2; exit 1; }
	ndd_chroot_ensure "$suite" || exit 1
	local inside=$cache_top/$(basename "$NDD_CITUS_TARBALL")
	if [ "$sub" != stop ]; then
		mkdir -p "$NDD_CHROOT_DIR/$suite$cache_top"
		cmp -s "$NDD_CITUS_TARBALL" "$NDD_CHROOT_DIR/$suite$inside" ||
			cp "$NDD_CITUS_TARBALL" "$NDD_CHROOT_DIR/$suite$inside" || exit 1
	fi
	ndd_run_major "$PGVER" citus scripts/citus.sh "$sub-here" "$inside"
	local status=$?
	if [ "$sub" = start ] && [ "$status" -eq 0 ]; then
		echo "From this machine, with any psql of PostgreSQL 15 or later:"
		echo "  psql -h $NDD_CHROOT_DIR/$suite$NDD_CITUS_DIR -p ${ports[0]} -U postgres    # the coordinator"
	fi
	return $status
}

# Build Citus for this PostgreSQL (unless the cache has it) and install it.
# PG_CFLAGS= : PGXS would add ndd's strict flags (CI's -Werror) to Citus's.
build-here() {
	local tarball=$1 key cache src
	case $PGVER in
	16 | 17 | 18) ;;
	*) echo "Citus 14 supports PostgreSQL 16 to 18, not $PGVER" >&2; exit 1 ;;
	esac
	need_tarball "$tarball"
	ndd_ensure_packages
	key=$(sha256sum "$tarball" | cut -c1-16)-$("$PG_CONFIG" --version | tr -c 'A-Za-z0-9.\n' _)
	cache=$cache_top/$key
	mkdir -p "$cache_top" || exit 1
	exec 8>"$cache_top/lock"
	flock 8
	if [ ! -f "$cache/built" ]; then
		# xz-utils for tar -J: a fresh chroot (debootstrap --variant=minbase)
		# has no xz
		ndd_ensure_packages xz-utils libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libicu-dev
		say "building $(basename "$tarball") for $("$PG_CONFIG" --version) (a few minutes, once)"
		rm -rf "$cache"
		src=$(mktemp -d /tmp/ndd-citus-build-XXXXXX)
		local t0=$SECONDS
		tar -xJf "$tarball" -C "$src" --strip-components=1 &&
			(cd "$src" && ./configure PG_CONFIG="$PG_CONFIG" >"$src/configure.out" 2>&1 ||
				{ tail -n 30 "$src/configure.out"; exit 1; }) &&
			make -C "$src" -s -j"$(nproc)" with_llvm=no PG_CFLAGS= >"$src/make.out" 2>&1 ||
			{ [ ! -f "$src/make.out" ] || tail -n 30 "$src/make.out" >&2; rm -rf "$src"; exit 1; }
		make -C "$src" -s install with_llvm=no PG_CFLAGS= DESTDIR="$cache/root" >/dev/null || { rm -rf "$src" "$cache"; exit 1; }
		rm -rf "$src"
		touch "$cache/built"
		say "built Citus in $((SECONDS - t0)) s"
	fi
	cp -a "$cache/root/." / || exit 1
	say "Citus $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$("$PG_CONFIG" --sharedir)/extension/citus.control") installed for PostgreSQL $PGVER"
}

psql_on() { local port=$1; shift; "$PGBIN/psql" -X -v ON_ERROR_STOP=1 -h "$NDD_CITUS_DIR" -p "$port" -U postgres "$@"; }

stop-here() {
	local n
	for n in "${names[@]}"; do
		[ -d "$NDD_CITUS_DIR/$n" ] && ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_CITUS_DIR/$n" -m fast stop >/dev/null 2>&1
	done
	rm -rf "$NDD_CITUS_DIR"
	return 0
}

start-here() {
	build-here "$1"
	ndd_build_install
	stop-here
	mkdir -p "$NDD_CITUS_DIR" && chmod 755 "$NDD_CITUS_DIR" || exit 1
	[ "$(id -u)" -eq 0 ] && chown postgres: "$NDD_CITUS_DIR"
	say "starting a coordinator and two workers in $NDD_CITUS_DIR"
	local i n
	for i in 0 1 2; do
		n=${names[$i]}
		ndd_as_owner "$PGBIN/initdb" -D "$NDD_CITUS_DIR/$n" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync \
			>"$NDD_CITUS_DIR/$n.initdb.log" 2>&1 || { cat "$NDD_CITUS_DIR/$n.initdb.log" >&2; exit 1; }
		# 8>&- 9>&-: the servers must not keep the build and install locks
		ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_CITUS_DIR/$n" -l "$NDD_CITUS_DIR/$n.log" -w \
			-o "-p ${ports[$i]} -k $NDD_CITUS_DIR -c listen_addresses='' -c shared_preload_libraries=citus -c citus.enable_statistics_collection=off" \
			start >/dev/null 8>&- 9>&- || { cat "$NDD_CITUS_DIR/$n.log" >&2; exit 1; }
	done
	for i in 1 2; do
		psql_on "${ports[$i]}" -q -c 'CREATE EXTENSION citus' || exit 1
	done
	# the workers are reached through the same socket directory; Citus
	# creates ndd on them
	psql_on "${ports[0]}" -q -o /dev/null <<EOF || exit 1
CREATE EXTENSION citus;
SELECT citus_set_coordinator_host('$NDD_CITUS_DIR', ${ports[0]});
SELECT citus_add_node('$NDD_CITUS_DIR', ${ports[1]});
SELECT citus_add_node('$NDD_CITUS_DIR', ${ports[2]});
CREATE EXTENSION ndd;
EOF
	psql_on "${ports[0]}" -c 'SELECT nodeid, nodename, nodeport, noderole FROM pg_dist_node ORDER BY nodeid' || exit 1
	echo "A coordinator and two workers run in $NDD_CITUS_DIR, with Citus and ndd:"
	for i in 0 1 2; do echo "  $PGBIN/psql -h $NDD_CITUS_DIR -p ${ports[$i]} -U postgres    # ${names[$i]}"; done
	echo "Stop them with: bash scripts/citus.sh stop"
}

case ${1:-} in
tarball) echo "$NDD_CITUS_TARBALL"; [ -f "$NDD_CITUS_TARBALL" ] ;;
build | start | stop) in_major "$1" ;;
build-here | start-here | stop-here) "$1" "${2:-}" ;;
*) usage ;;
esac
