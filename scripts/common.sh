# Shared set-up for scripts/demo.sh and scripts/test.sh (sourced, not run).
# Installs what is missing, builds and installs ndd, and runs a throwaway
# PostgreSQL 15 cluster as an unprivileged user on a private Unix socket.

PGVER=15
# NDD_PGBIN: another PostgreSQL 15 installation (e.g. a relocated copy) to
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
	apt-get update -qq >&2 || exit 1
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
ndd_corpus() {
	local docs=$1 out=$2 key
	shift 2
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
