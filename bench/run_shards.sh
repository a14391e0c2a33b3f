#!/usr/bin/env bash
# run_shards.sh — sorting a table sharded with postgres_fdw: `make
# bench-shards`.  A coordinator and three shard servers on this machine,
# each a throwaway cluster of its own with pgxxl preloaded (it shows
# overlap and cost, not speedup: there are 2 cores).  ROWS (30M) rows of
# (a bigint, b bigint), a range-partitioned table whose three partitions
# are foreign tables on the shards (a third of the rows each), and the same
# rows in one local table.  Side by side, alternated ROUNDS (3) times, each
# `SELECT count(*), sum(b) FROM (... sorted by b ...)`:
#   stock         ORDER BY over the partitions with PostgreSQL's sorts on
#                 the shards (xxl.sort_in_plans = off there and here): each
#                 shard sorts for postgres_fdw, MergeAppend merges here
#   stock+xxl     the same with pgxxl's XxlSort on the shards
#   sharded       xxl.sort of the sharded table: every shard sorts at once,
#                 the engine merges here
#   local         xxl.sort of the local table (all rows on one server)
# work_mem = xxl.memory = MEM (64MB) everywhere.  Reported: median time,
# ratios to stock and to stock+xxl, rows per second over the wire, the
# coordinator backend's private peak memory, and for the sharded sort each
# shard's time to its first row (its whole sort).  The answers must agree.
#
# Files: bench/out/shards.{csv,log,png}.  Environment: ROWS, MEM, ROUNDS,
# KEEP_CLUSTER=1.  Targets (issue 49): sharded <= 0.3x stock,
# <= 0.7x stock+xxl.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-30000000}
MEM=${MEM:-64MB}
case $MEM in *[0-9]) MEM=${MEM}MB ;; esac
ROUNDS=${ROUNDS:-3}
OUT=$REPO/bench/out
mkdir -p "$OUT"
CSV=$OUT/shards.csv
LOG=$OUT/shards.log
PNG=$OUT/shards.png
: >"$LOG"

build_and_install
make_repo_reachable
make_workdir shards

# four clusters, each started by lib.sh's start_cluster; their sockets and
# ports kept here
declare -A DIR HOST PORT
NODES=(coord s1 s2 s3)
stop_all() {
	for n in "${NODES[@]}"; do
		[ -n "${DIR[$n]:-}" ] || continue
		as_pg "$PGBIN/pg_ctl" -D "${DIR[$n]}/data" -m fast -w stop >/dev/null 2>&1 || true
		rm -rf "${HOST[$n]}"
	done
	[ "${KEEP_CLUSTER:-0}" = 1 ] || rm -rf "$WORK"
}
trap stop_all EXIT
for n in "${NODES[@]}"; do
	start_cluster "$n"
	cat >>"$CLUSTER_DIR/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pgxxl'
max_parallel_workers_per_gather = 0
work_mem = '$MEM'
xxl.memory = '$MEM'
wal_level = minimal
max_wal_senders = 0
max_wal_size = 16GB
checkpoint_timeout = 1h
CONF
	as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$WORK/$n.log" -w -t 300 restart >/dev/null
	DIR[$n]=$CLUSTER_DIR
	HOST[$n]=$SOCKDIR
	PORT[$n]=$PGPORT
	CLUSTER_STARTED=
	SOCKDIR=
done
q() { local n=$1; shift; as_pg "$PGBIN/psql" -XAtq -v ON_ERROR_STOP=1 -h "${HOST[$n]}" -p "${PORT[$n]}" -d postgres "$@"; }

echo "bench-shards: $(nproc) cores, $ROWS rows, $MEM; load:$(uptime | sed 's/.*load average//')" | tee -a "$LOG"
per=$((ROWS / 3))
for i in 1 2 3; do
	lo=$(((i - 1) * per + 1))
	hi=$((i == 3 ? ROWS : i * per))
	q "s$i" -c "CREATE EXTENSION pgxxl" -c "
		CREATE TABLE part AS SELECT g::bigint AS a, hashint8(g)::bigint AS b FROM generate_series($lo, $hi) g" \
		-c "VACUUM ANALYZE part" &
done
servers=""
for i in 1 2 3; do
	servers+="CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '${HOST[s$i]}', port '${PORT[s$i]}', dbname 'postgres', fetch_size '10000');
		CREATE USER MAPPING FOR CURRENT_USER SERVER s$i;
		CREATE FOREIGN TABLE p$i PARTITION OF sharded FOR VALUES FROM ($(((i - 1) * per + 1))) TO ($((i == 3 ? ROWS + 1 : i * per + 1))) SERVER s$i OPTIONS (table_name 'part');
		"
done
q coord -c "CREATE EXTENSION pgxxl" -c "CREATE EXTENSION postgres_fdw" -c "
	CREATE TABLE sharded (a bigint, b bigint) PARTITION BY RANGE (a);
	$servers
	CREATE TABLE flat AS SELECT g::bigint AS a, hashint8(g)::bigint AS b FROM generate_series(1, $ROWS) g" \
	-c "VACUUM ANALYZE flat"
wait
for i in 1 2 3; do q coord -c "ANALYZE p$i"; done
echo "stock plan:" >>"$LOG"
q coord -c "SET xxl.sort_in_plans = off" -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM sharded ORDER BY b" >>"$LOG"

shard_setting() { for i in 1 2 3; do q "s$i" -c "ALTER SYSTEM SET xxl.sort_in_plans = $1" -c "SELECT pg_reload_conf()" >/dev/null; done; }

# run CONFIG: one measurement; prints "secs peak_kb answer"
run() {
	local cfg=$1 stmt coord_plans=off
	case $cfg in
		stock) shard_setting off; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" ;;
		stock+xxl) shard_setting on; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" ;;
		sharded) stmt="SELECT count(*), sum(b) FROM xxl.sort('sharded', 'b') AS s(a bigint, b bigint)" ;;
		local) stmt="SELECT count(*), sum(b) FROM xxl.sort('flat', 'b') AS s(a bigint, b bigint)" ;;
	esac
	q coord <<SQL
SET xxl.sort_in_plans = $coord_plans;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt \gset ans_
SELECT format('RESULT %s %s %s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]::bigint
	  - (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1]::bigint,
	:'ans_count' || '/' || :'ans_sum');
SELECT CASE WHEN '$cfg' = 'sharded' THEN 'SHARDS ' || (SELECT string_agg((s->>'shard') || '=' || (s->>'first_row_ms'), ' ')
	FROM json_array_elements(details::json->'shards') s) END FROM xxl.last_stats();
SQL
}

CONFIGS=(stock stock+xxl sharded local)
echo "config,round,secs,peak_kb,answer" >"$CSV"
declare -A TIMES PEAK ANSWER SHARDS
for r in $(seq "$ROUNDS"); do
	for cfg in "${CONFIGS[@]}"; do
		out=$(run "$cfg" 2>&1) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-shards: $cfg failed; see $LOG" >&2; exit 1; }
		printf '%s %s\n%s\n' "$cfg" "$r" "$out" >>"$LOG"
		read -r _ secs peak answer <<<"$(grep '^RESULT ' <<<"$out")"
		TIMES[$cfg]="${TIMES[$cfg]:-} $secs"
		PEAK[$cfg]=$peak
		ANSWER[$cfg]=$answer
		s=$(grep '^SHARDS ' <<<"$out" || true)
		[ -n "$s" ] && SHARDS[$cfg]=${s#SHARDS }
		echo "$cfg,$r,$secs,$peak,$answer" >>"$CSV"
	done
done
for cfg in "${CONFIGS[@]}"; do
	[ "${ANSWER[$cfg]}" = "${ANSWER[stock]}" ] || { echo "bench-shards: $cfg answered ${ANSWER[$cfg]}, stock ${ANSWER[stock]}" >&2; exit 1; }
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A MED
for cfg in "${CONFIGS[@]}"; do MED[$cfg]=$(median "${TIMES[$cfg]}"); done
{
	echo
	printf "%-10s %9s %9s %11s %10s %14s  %s\n" config secs "/stock" "/stock+xxl" "Mrows/s" "coord peak MB" "shards' sorts (ms to first row)"
	for cfg in "${CONFIGS[@]}"; do
		printf "%-10s %9.2f %9.2f %11.2f %10.1f %14.1f  %s\n" "$cfg" "${MED[$cfg]}" \
			"$(echo "${MED[$cfg]} / ${MED[stock]}" | bc -l)" "$(echo "${MED[$cfg]} / ${MED[stock+xxl]}" | bc -l)" \
			"$(echo "$ROWS / ${MED[$cfg]} / 1000000" | bc -l)" "$(echo "${PEAK[$cfg]} / 1024" | bc -l)" "${SHARDS[$cfg]:-}"
	done
	echo "(median of $ROUNDS; secs: the coordinator's clock around the statement; coord peak: its backend's"
	echo " private VmHWM less shared memory; answers (count/sum) equal: ${ANSWER[stock]})"
} | tee -a "$LOG"

gnuplot <<GP
set terminal pngcairo size 800,450
set output '$PNG'
set title "Sorting $ROWS rows over 3 postgres_fdw shards, $MEM (median of $ROUNDS)"
set ylabel 'seconds'
set style data histograms
set style fill solid 0.7
set boxwidth 0.6
set yrange [0:*]
set datafile separator ','
plot '-' using 2:xtic(1) title ''
stock,${MED[stock]}
stock+xxl,${MED[stock+xxl]}
sharded,${MED[sharded]}
local,${MED[local]}
e
GP
echo "bench-shards: $CSV, $PNG"
