#!/usr/bin/env bash
# Run every test suite on every PostgreSQL major ndd supports: 15 on this
# Debian 12 machine, 17 in a Debian 13 (trixie) chroot and 18 in a Debian sid
# chroot, each through scripts/test.sh with NDD_PG set; then the dump of a
# 15 database restored into 17 and 18 (test/majors/dump_restore.sh), the
# Debian package of each major (scripts/package_all.sh), the Python and Node
# clients' suites (scripts/clients.sh), the fuzzing harnesses for a
# fixed number of executions (scripts/fuzz.sh), and the shape of src/: the
# length of every C function (test/scripts/function_lengths.sh) and the
# layers' includes (test/scripts/layers.sh).  Prints one
# "NAME: N passed, N failed" line per stage and ends with the total,
# "N passed, N failed".
#
# NDD_MAJORS: the majors to run ("15 17 18" when unset).  NDD_CITUS_MAJORS:
# those for which Citus is built first (scripts/citus.sh build, cached in the
# chroot), so that test/t/011_citus.pl runs there ("18" when unset; it skips
# on the others); a failed build counts as one failure, and its log
# (/tmp/ndd-citus-build-*.log) is kept.  A major's chroot is made before
# anything runs in it, its Citus build included.  NDD_CHROOT_DIR:
# where the chroots live and are kept between runs (/var/tmp/ndd-chroot).
# NDD_DEBIAN_MIRROR: the mirror debootstrap reads (the one apt uses here).
# Making and entering a chroot needs root; as root the clusters still run as
# the unprivileged postgres user, inside the chroot as outside.
set -u
. "$(dirname "$0")/common.sh"

majors=${NDD_MAJORS:-15 17 18}
results=()
passed=0
failed=0

if [ "$(id -u)" -ne 0 ] && [ "$majors" != 15 ]; then
	echo "Testing PostgreSQL 17 and 18 makes and enters Debian chroots, which needs root." >&2
	echo "Run: sudo bash $0   (or NDD_MAJORS=15 bash $0 for PostgreSQL 15 alone)" >&2
	exit 1
fi

# add_tally NAME LOG: the "N passed, N failed" that ends LOG, under NAME (a
# stage that did not get as far as its tally counts as one failure)
add_tally() {
	local tally
	tally=$(tail -n 1 "$2" | grep -xE '[0-9]+ passed, [0-9]+ failed')
	[ -n "$tally" ] || tally="0 passed, 1 failed"
	results+=("$1: $tally")
	passed=$((passed + ${tally%% *}))
	tally=${tally#*, }
	failed=$((failed + ${tally%% *}))
}

# citus_build MAJOR: Citus built and installed for MAJOR (scripts/citus.sh
# build), so that test/t/011_citus.pl runs; its output in a log of its own,
# whose tail is shown, and which is kept when the build fails (one failure).
citus_build() {
	local major=$1 tarball clog
	# without Citus's sources on this machine 011_citus says it skips
	if ! tarball=$(bash "$NDD_TOP/scripts/citus.sh" tarball); then
		say "no Citus tarball at $tarball: Citus is not built, test/t/011_citus.pl skips"
		return 0
	fi
	clog=$(mktemp /tmp/ndd-citus-build-XXXXXX.log)
	if NDD_PG=$major bash "$NDD_TOP/scripts/citus.sh" build >"$clog" 2>&1; then
		tail -n 20 "$clog"
		rm -f "$clog"
		return 0
	fi
	tail -n 40 "$clog"
	say "the Citus build for PostgreSQL $major failed; its log: $clog"
	echo "0 passed, 1 failed" >"$log"
	add_tally "Citus build for PostgreSQL $major (log: $clog)" "$log"
}

log=$(mktemp /tmp/ndd-test-all-XXXXXX.log)
for major in $majors; do
	suite=$(ndd_suite_of "$major")
	say "PostgreSQL $major ($suite)"
	# The chroot first: the Citus build runs in it too.  When it cannot be
	# made, ndd_run_major below tries again and the major's tally fails (a
	# subshell: ndd_ensure_packages exits when apt fails).
	[ -z "$suite" ] || [ "$suite" = host ] || (ndd_chroot_ensure "$suite")
	if [[ " ${NDD_CITUS_MAJORS-18} " == *" $major "* ]]; then
		citus_build "$major"
	fi
	ndd_run_major "$major" ndd scripts/test.sh 2>&1 | tee "$log"
	add_tally "PostgreSQL $major" "$log"
done

# The two ways into a chroot (a mount namespace of its own, or plain mounts
# where / is not a mount point), on the first chroot the majors above made.
for major in $majors; do
	suite=$(ndd_suite_of "$major")
	[ "$suite" = host ] && continue
	say "entering the $suite chroot both ways"
	bash "$NDD_TOP/test/scripts/chroot.sh" "$suite" 2>&1 | tee "$log"
	add_tally "chroot entry" "$log"
	break
done

# The majors above left ndd installed in each: a 15 database dumped with
# 15's pg_dump, restored into the newer ones.
newer=$(for m in $majors; do [ "$m" -gt 15 ] && echo "$m"; done | xargs)
if [[ " $majors " == *" 15 "* ]] && [ -n "$newer" ]; then
	say "a dump from PostgreSQL 15 restored into ${newer// /, }"
	NDD_DR_INSTALL=0 bash "$NDD_TOP/test/majors/dump_restore.sh" $newer 2>&1 | tee "$log"
	add_tally "dump from 15 restored into ${newer// /, }" "$log"
fi

# The Debian package of each major, built and checked where Debian ships it
# (one test a package).
say "the Debian packages"
NDD_MAJORS=$majors bash "$NDD_TOP/scripts/package_all.sh" 2>&1 | tee "$log"
pkg_ok=$(tail -n 1 "$log" | sed -nE 's/^([0-9]+) of ([0-9]+) packages ok$/\1 \2/p')
if [ -n "$pkg_ok" ]; then
	echo "${pkg_ok% *} passed, $((${pkg_ok#* } - ${pkg_ok% *})) failed" >"$log"
fi
add_tally "packages" "$log"

# The client packages (clients/python, clients/node), each against a
# PostgreSQL 15 cluster with ndd installed; a client whose language runtime
# is missing says so and counts nothing.
if [[ " $majors " == *" 15 "* ]]; then
	say "the Python and Node clients"
	bash "$NDD_TOP/scripts/clients.sh" 2>&1 | tee "$log"
	add_tally "clients" "$log"
fi

# The fuzzing harnesses (test/fuzz) still build against the real sources and
# run clean: a fixed number of executions from a fixed seed, so the run does
# the same work on any machine (the longer campaigns are scripts/fuzz.sh's).
if [[ " $majors " == *" 15 "* ]]; then
	say "the fuzzing harnesses"
	NDD_FUZZ_RUNS=${NDD_FUZZ_RUNS:-20000} NDD_FUZZ_SEED=${NDD_FUZZ_SEED:-1} \
		bash "$NDD_TOP/scripts/fuzz.sh" 2>&1 | tee "$log"
	add_tally "fuzzing" "$log"
fi

# The shape of the sources: no C function in src/ over 100 lines (one check
# per file).
say "the length of the C functions"
bash "$NDD_TOP/test/scripts/function_lengths.sh" 2>&1 | tee "$log"
add_tally "C function lengths" "$log"
rm -f "$log"

# The layers of src/: no file includes a header of a higher layer, and every
# header of ndd is named by its layer (DEVELOPER.md, The map).
say "the layers of src/"
bash "$NDD_TOP/test/scripts/layers.sh" 2>&1 | tee "$log"
add_tally "layers of src/" "$log"
rm -f "$log"

printf '%s\n' "${results[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
