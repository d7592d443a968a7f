# Shared set-up for scripts/demo.sh and scripts/test.sh (sourced, not run).
# Installs what is missing, builds and installs ndd, and runs a throwaway
# PostgreSQL cluster as an unprivileged user on a private Unix socket.

# NDD_PG: the PostgreSQL major to build and test against (15, the version
# Debian 12 ships, when unset; scripts/test_all.sh runs 17 and 18 in Debian
# chroots that ship them)
PGVER=${NDD_PG:-15}
case $PGVER in
*[!0-9]* | '') echo "NDD_PG must be a PostgreSQL major version such as 15, not '$PGVER'" >&2; exit 2 ;;
esac
# NDD_PGBIN: another installation of that major (e.g. a relocated copy) to
# build against and test with; Debian's by default
PGBIN=${NDD_PGBIN:-/usr/lib/postgresql/$PGVER/bin}
export PG_CONFIG=$PGBIN/pg_config
NDD_PACKAGES="gcc make libc6-dev postgresql-$PGVER postgresql-server-dev-$PGVER libxxhash-dev libipc-run-perl"
NDD_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '== %s\n' "$*" >&2; }

# Install missing Debian packages (as root), or say what to run and stop.
ndd_ensure_packages() {
	local missing=() p
	for p in $NDD_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "Missing packages: ${missing[*]}" >&2
		echo "Run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# sid's Release file may be past its Valid-Until date between publishings
	apt-get -o Acquire::Check-Valid-Until=false update -qq >&2 || exit 1
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || exit 1
}

# Build, and install into PostgreSQL's directories.  One build tree at a time
# owns an installed ndd: the lock (one per installation) is held until the
# calling script exits, so two checkouts on one machine cannot swap ndd.so
# under each other's tests.
ndd_build_install() {
	# NDD_INSTALL_LOCKED: a caller already holds the lock (flock(1) around us)
	if [ -z "${NDD_INSTALL_LOCKED:-}" ]; then
		exec 9>"/tmp/ndd-install${NDD_PGBIN:+$(echo "$NDD_PGBIN" | tr / _)}.lock"
		flock 9
		export NDD_INSTALL_LOCKED=1
	fi
	say "building ndd"
	make -C "$NDD_TOP" -s PG_CONFIG="$PG_CONFIG" ${PG_CFLAGS:+PG_CFLAGS="$PG_CFLAGS"} >&2 || exit 1
	if [ ! -w "$($PG_CONFIG --pkglibdir)" ]; then
		echo "Cannot write to $($PG_CONFIG --pkglibdir)." >&2
		echo "Run: sudo make -C $NDD_TOP install PG_CONFIG=$PG_CONFIG" >&2
		exit 1
	fi
	make -C "$NDD_TOP" -s install PG_CONFIG="$PG_CONFIG" >&2 || exit 1
}

# Write a corpus of $1 documents to $2 with bench/corpus.py (further
# arguments are passed to it, e.g. --variants 8), unless $2 already holds
# the corpus it would write now: $2.key records corpus.py's --key, a digest
# of the program, its arguments and the source files it reads.  Written via
# a temporary name, so an interrupted run leaves no half corpus behind.
# NDD_BENCH_CORPUS_AS_IS=1 takes an existing $2 as it is: a corpus copied
# from another machine or into a chroot, whose source files differ, so that
# two majors are measured on the same documents.
ndd_corpus() {
	local docs=$1 out=$2 key
	shift 2
	[ "${NDD_BENCH_CORPUS_AS_IS:-0}" = 1 ] && [ -s "$out" ] && return 0
	ndd_ensure_packages python3
	key=$(python3 "$NDD_TOP/bench/corpus.py" --docs "$docs" "$@" --key) || exit 1
	[ -s "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ] && return 0
	say "writing $docs documents to $out (about a minute per 1M)"
	rm -f "$out.key"
	python3 "$NDD_TOP/bench/corpus.py" --docs "$docs" "$@" --out "$out.$$" &&
		mv "$out.$$" "$out" && echo "$key" >"$out.key" || { rm -f "$out.$$"; exit 1; }
}

# Copy the sources to $1: what git tracks plus new files it does not ignore
# (so build output in the checkout is not copied), or, outside git, the
# whole tree, cleaned.  The checkout itself stays untouched.
ndd_copy_tree() {
	local dest=$1
	mkdir -p "$dest" || return 1
	if git -C "$NDD_TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$NDD_TOP" && git ls-files -z -c -o --exclude-standard |
			while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
			tar --null -T - -cf -) | tar -xf - -C "$dest"
	else
		(cd "$NDD_TOP" && tar --exclude=.git -cf - .) | tar -xf - -C "$dest" &&
			{ make -C "$dest" -s clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1; true; }
	fi
}

# Run a command as the cluster's owner: postgres when we are root.
ndd_as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# Start a throwaway cluster; sets NDD_TMP, PGHOST, PGPORT, PGUSER.
ndd_cluster_start() {
	NDD_TMP=$(mktemp -d /tmp/ndd-XXXXXX)
	chmod 755 "$NDD_TMP"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$NDD_TMP"
	trap ndd_cluster_stop EXIT
	export PGHOST=$NDD_TMP PGPORT=54329 PGUSER=postgres PGDATABASE=postgres
	say "starting a throwaway cluster in $NDD_TMP"
	ndd_as_owner "$PGBIN/initdb" -D "$NDD_TMP/data" -U postgres -A trust -E UTF8 \
		--locale=C.UTF-8 --no-sync >"$NDD_TMP/initdb.log" 2>&1 ||
		{ cat "$NDD_TMP/initdb.log" >&2; exit 1; }
	# 9>&-: the server must not inherit (and keep) the install lock
	ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -l "$NDD_TMP/server.log" -w \
		-o "-p $PGPORT -k $NDD_TMP -c listen_addresses='' -c fsync=off" start >/dev/null 9>&- ||
		{ cat "$NDD_TMP/server.log" >&2; exit 1; }
}

ndd_cluster_stop() {
	[ -n "${NDD_TMP:-}" ] || return 0
	ndd_as_owner "$PGBIN/pg_ctl" -D "$NDD_TMP/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$NDD_TMP"
	NDD_TMP=
}

# --- Debian chroots for the majors this machine's Debian does not ship
# (scripts/test_all.sh).  NDD_CHROOT_DIR: where they live and are kept
# between runs.
NDD_CHROOT_DIR=${NDD_CHROOT_DIR:-/var/tmp/ndd-chroot}

# The Debian suite that ships a major: "host" for this machine's own.
ndd_suite_of() {
	case $1 in
	15) echo host ;;
	17) echo trixie ;;
	18) echo sid ;;
	*) return 1 ;;
	esac
}

# The mirror this machine's apt reads (deb822 or one-line sources), so the
# chroots come from the same place as the host's packages.
ndd_debian_mirror() {
	[ -n "${NDD_DEBIAN_MIRROR:-}" ] && { echo "$NDD_DEBIAN_MIRROR"; return; }
	local uri
	uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
		grep -vE '^\s*#' | grep -oE 'https?://[^ ]*/debian/?( |$)' | grep -v security | head -n 1)
	echo "${uri:-http://deb.debian.org/debian}" | tr -d ' '
}

# ndd_chroot_ensure SUITE: a minimal Debian chroot of SUITE in $NDD_CHROOT_DIR/SUITE
# (about a minute the first time; kept for later runs).  test.sh installs the
# server and build packages inside it, as it does on the host.
ndd_chroot_ensure() {
	local suite=$1 dir=$NDD_CHROOT_DIR/$1
	[ -f "$dir/.ndd-chroot-ready" ] && return 0
	# debootstrap alone: NDD_PACKAGES are the packages of the caller's major
	# (NDD_PG), which this machine's Debian does not ship when the caller
	# wants the chroot of that major (scripts/citus.sh build with NDD_PG=18)
	NDD_PACKAGES= ndd_ensure_packages debootstrap
	# rm -rf through a mount left in it (the /dev of an ndd_chroot_mounted
	# that was killed) would delete this machine's device files
	if awk -v d="$dir/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
		echo "something is mounted under $dir: unmount it (umount -l) before the chroot is made again" >&2
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$NDD_CHROOT_DIR"
	say "debootstrap $suite into $dir from $(ndd_debian_mirror)"
	debootstrap --variant=minbase "$suite" "$dir" "$(ndd_debian_mirror)" >"$NDD_CHROOT_DIR/$suite.debootstrap.log" 2>&1 ||
		{ tail -n 20 "$NDD_CHROOT_DIR/$suite.debootstrap.log" >&2; return 1; }
	cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null
	touch "$dir/.ndd-chroot-ready"
}

# ndd_in_chroot SUITE COMMAND...: run COMMAND inside the chroot, with /proc and
# /dev mounted.  Where it can, in a mount namespace of its own whose mounts
# are private: the mounts go with it (when its last process ends, so a server
# started inside keeps them).  Inside a container or chroot whose / is not a
# mount point, unshare cannot make them private ("cannot change root
# filesystem propagation: Invalid argument"): there they are mounted here for
# the time of COMMAND (ndd_chroot_mounted).
ndd_in_chroot() {
	local dir=$NDD_CHROOT_DIR/$1
	shift
	if ! ndd_private_mounts; then
		ndd_chroot_mounted "$dir" "$@"
		return
	fi
	unshare --mount --propagation private -- bash -c '
		dir=$1; shift
		mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev" || exit 1
		exec chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			${PG_CFLAGS:+PG_CFLAGS="$PG_CFLAGS"} "$@"' bash "$dir" "$@"
}

# Whether unshare can make a mount namespace whose mounts are all private
# (not where / is not a mount point); asked once per shell.
# NDD_PRIVATE_MOUNTS=no takes the way without a namespace anyway.
ndd_private_mounts() {
	if [ -z "${NDD_PRIVATE_MOUNTS:-}" ]; then
		NDD_PRIVATE_MOUNTS=no
		unshare --mount --propagation private true 2>/dev/null && NDD_PRIVATE_MOUNTS=yes
	fi
	[ "$NDD_PRIVATE_MOUNTS" = yes ]
}

# ndd_chroot_mounted DIR COMMAND...: ndd_in_chroot without a mount namespace:
# /proc and /dev mounted in this one, COMMAND run in the chroot, then both
# unmounted, also when COMMAND is interrupted (a subshell, so the caller's
# traps stay).  The copy of /dev is a slave: unmounting it must not unmount
# /dev/pts or /dev/shm here, as it would where /dev is shared.  Two runs at
# once stack their mounts, and each unmounts the top one when it ends: lazily
# (-l), so the other run's processes keep what they have open and find the
# remaining mounts, and nothing is left mounted once both ended.  A server
# started by COMMAND outlives it: it finds /proc and /dev only while another
# ndd_in_chroot runs (dump_restore.sh's clients, scripts/citus.sh stop).
ndd_chroot_mounted() (
	dir=$1
	shift
	mount -t proc proc "$dir/proc" || exit 1
	mount --rbind /dev "$dir/dev" || { umount -l "$dir/proc"; exit 1; }
	if ! mount --make-rslave "$dir/dev"; then
		umount -l "$dir/proc"
		echo "$dir/dev: not a slave mount, so left mounted (umount -l would propagate): unmount it by hand" >&2
		exit 1
	fi
	trap 'umount -l "$dir/dev"; umount -l "$dir/proc"' EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	chroot "$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		${PG_CFLAGS:+PG_CFLAGS="$PG_CFLAGS"} "$@"
)

# ndd_run_major MAJOR COPY SCRIPT [ARGS...]: run the tree's SCRIPT (a path
# from the top, e.g. scripts/test.sh) with NDD_PG=MAJOR where Debian ships
# that major: here, or in its chroot on a fresh copy of the sources in
# /build/COPY (a name of the caller's, so that two callers do not share it).
ndd_run_major() {
	local major=$1 copy=$2 script=$3 suite
	shift 3
	suite=$(ndd_suite_of "$major") || { echo "no Debian suite known for PostgreSQL $major" >&2; return 1; }
	if [ "$suite" = host ]; then
		NDD_PG=$major bash "$NDD_TOP/$script" "$@"
		return
	fi
	ndd_chroot_ensure "$suite" || return 1
	rm -rf "${NDD_CHROOT_DIR:?}/$suite/build/$copy"
	ndd_copy_tree "$NDD_CHROOT_DIR/$suite/build/$copy" || return 1
	ndd_in_chroot "$suite" env NDD_PG="$major" bash "/build/$copy/$script" "$@"
}
