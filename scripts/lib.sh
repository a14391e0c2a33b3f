# lib.sh — shared by test.sh and demo.sh: finding PostgreSQL 15, running
# things as the postgres OS user (the server refuses root), and a throwaway
# cluster that lives in a directory of its own and listens only on a unix
# socket, so it never collides with another server on the machine.
# Source it; it does not run anything by itself.

PGBIN=/usr/lib/postgresql/15/bin
PG_CONFIG=$PGBIN/pg_config

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

# Re-run the calling script as root: installing into PostgreSQL's directories
# and switching to the postgres user both need it.
require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null; then
			exec sudo -E bash "$0" "$@"
		fi
		echo "$(basename "$0"): must run as root (or with sudo available)" >&2
		exit 1
	fi
}

as_pg() {
	runuser -u postgres -- "$@"
}

# The postgres user must reach the repository (TAP tests and server-side
# reads of test files); a clone under /root, say, is not reachable by default.
# Open only the search bit on the ancestors that lack it.
make_repo_reachable() {
	local d="" part
	if as_pg test -r "$REPO/Makefile" -a -x "$REPO/test"; then
		return 0
	fi
	# from the root down: access to a directory is only known once its
	# parent is passable
	IFS=/ read -ra parts <<<"${REPO#/}"
	for part in "${parts[@]}"; do
		d=$d/$part
		if ! as_pg test -x "$d"; then
			echo "note: chmod o+x $d (so the postgres user can reach the repository)"
			chmod o+x "$d"
		fi
	done
	if ! as_pg test -r "$REPO/Makefile"; then
		echo "note: chmod -R o+rX $REPO"
		chmod -R o+rX "$REPO"
	fi
}

# make_workdir NAME: a fresh tmp_check/NAME under the repository, owned by
# the postgres user (a test run and a demo each have their own).
make_workdir() {
	WORK=$REPO/tmp_check/$1
	rm -rf "$WORK"
	mkdir -p "$WORK"
	chmod 755 "$REPO/tmp_check"
	chown postgres: "$WORK"
}

# start_cluster NAME: initdb + start in $WORK/NAME, socket in a short private
# directory (unix socket paths are limited to about 100 bytes, and the
# repository path may be long).  Sets PGHOST, PGPORT, PGUSER for clients.
start_cluster() {
	local name=$1
	CLUSTER_DIR=$WORK/$name
	SOCKDIR=$(mktemp -d /tmp/pgxxl-sock.XXXXXX)
	chown postgres: "$SOCKDIR"
	chmod 700 "$SOCKDIR"
	export PGHOST=$SOCKDIR PGUSER=postgres
	export PGPORT=$((50000 + RANDOM % 10000))
	as_pg "$PGBIN/initdb" -D "$CLUSTER_DIR/data" -A trust -E UTF8 --no-locale --no-sync \
		>"$WORK/$name-initdb.log" 2>&1 || {
		cat "$WORK/$name-initdb.log"
		return 1
	}
	cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF

# pgxxl throwaway cluster
listen_addresses = ''
unix_socket_directories = '$SOCKDIR'
port = $PGPORT
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 20
shared_buffers = 128MB
CONF
	# Settings other tests need go into test/pg_regress.conf.
	if [ -f "$REPO/test/pg_regress.conf" ]; then
		cat "$REPO/test/pg_regress.conf" >>"$CLUSTER_DIR/data/postgresql.conf"
	fi
	# libgomp's idle threads spin before they sleep, taking the core from the
	# thread they wait for when other work competes for it (docs/graph.md);
	# it reads the policy once, when the server loads the library.
	if ! OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} \
		as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$WORK/$name.log" -w -t 60 start >/dev/null; then
		echo "could not start the $name cluster; server log:" >&2
		cat "$WORK/$name.log" >&2 || true
		return 1
	fi
	CLUSTER_STARTED=$CLUSTER_DIR
}

stop_cluster() {
	if [ -n "${CLUSTER_STARTED:-}" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_STARTED/data" -m fast -w stop >/dev/null 2>&1 ||
			as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_STARTED/data" -m immediate -w stop >/dev/null 2>&1 || true
		CLUSTER_STARTED=
	fi
	if [ -n "${SOCKDIR:-}" ]; then
		rm -rf "$SOCKDIR"
		SOCKDIR=
	fi
}

# Build and install the extension (deps first: a bare machine has no PGXS).
build_and_install() {
	bash "$REPO/scripts/deps.sh"
	# on every core: serially the build alone took 40 s of the CI run
	make -C "$REPO" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" all
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}

# --- benchmarks ------------------------------------------------------------

# The graph benchmarks' random graphs: nodes and edges of each size (tiny:
# a quick smoke test of a benchmark itself).
graph_nodes_of() { case $1 in tiny) echo 100000 ;; small) echo 1000000 ;; big) echo 10000000 ;; esac; }
graph_edges_of() { case $1 in tiny) echo 500000 ;; small) echo 5000000 ;; big) echo 50000000 ;; esac; }

# install_missing WHO PKG...: apt-get install the packages that are not
# installed (output to $LOG; an update first only when the install fails).
install_missing() {
	local who=$1 p s missing=()
	shift
	for p in "$@"; do
		s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$s" = installed ] || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "$who: installing ${missing[*]}"
	local opts=(-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
	DEBIAN_FRONTEND=noninteractive apt-get install "${opts[@]}" "${missing[@]}" </dev/null >>"$LOG" 2>&1 ||
		{ apt-get update -q </dev/null >>"$LOG" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install "${opts[@]}" "${missing[@]}" </dev/null >>"$LOG" 2>&1; }
}

# start_bench_server NAME [EXTRA_CONF]: a throwaway cluster in tmp_check/NAME
# tuned for benchmarks (new tables filled in their creating transaction skip
# WAL, for pgxxl and its peers alike; no checkpoints midway), removed on exit
# unless KEEP_CLUSTER=1.  EXTRA_CONF lines are appended to postgresql.conf.
start_bench_server() {
	make_repo_reachable
	make_workdir "$1"
	trap 'stop_cluster; [ "${KEEP_CLUSTER:-0}" = 1 ] || rm -rf "$WORK/server"' EXIT
	start_cluster server
	cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF
wal_level = minimal
max_wal_senders = 0
max_wal_size = 16GB
checkpoint_timeout = 1h
${2:-}
CONF
	restart_server
}

# A restart empties shared_buffers: a backend's VmHWM counts every page of
# shared memory it has touched, so measurements start from a cold cache.
restart_server() {
	as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$WORK/server.log" -w -t 300 restart >/dev/null
}

# Benchmark text: the first BYTES bytes of the text files (grep -I) of
# /usr/share/doc and /usr/include in path order, into FILE (kept between
# runs while its size matches).  Prints the bytes it has (fewer if the
# machine has less text).
collect_text() {
	local file=$1 bytes=$2
	if [ ! -s "$file" ] || [ "$(stat -c %s "$file")" -ne "$bytes" ]; then
		find /usr/share/doc /usr/include -type f -print0 2>/dev/null | LC_ALL=C sort -z |
			xargs -0 grep -lIZ '' 2>/dev/null | xargs -0 cat 2>/dev/null | head -c "$bytes" >"$file" || true
	fi
	chmod 644 "$file"
	stat -c %s "$file"
}

# The text FILE of BYTES bytes as table TABLE (id int, chunk bytea) of 1 MiB
# chunks on the bench server (psql_ defined by the caller); fails unless
# every byte is in.
load_text_corpus() {
	local table=$1 file=$2 bytes=$3 have
	cp "$file" "$WORK/text.bin"
	chown postgres: "$WORK/text.bin"
	psql_ <<SQL
CREATE TABLE $table (id int, chunk bytea);
ALTER TABLE $table ALTER COLUMN chunk SET STORAGE EXTERNAL;
INSERT INTO $table
  SELECT i, pg_read_binary_file('$WORK/text.bin', i * 1048576::bigint, 1048576)
  FROM generate_series(0, ($bytes - 1) / 1048576) i;
VACUUM ANALYZE $table;
SQL
	have=$(psql_ -c "SELECT sum(length(chunk)) FROM $table")
	[ "$have" = "$bytes" ] || { echo "load_text_corpus: $table has $have bytes, expected $bytes" >&2; return 1; }
}
