#!/usr/bin/env bash
# run_shards.sh — sorting and spanning forests of tables sharded with
# postgres_fdw: `make bench-shards`.  A coordinator and three shard servers on this machine,
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
#   merge         the ORDER BY query with pgxxl's XxlShardMerge in place
#                 of the MergeAppend (xxl.sort_in_plans here), XxlSort on
#                 the shards: every shard sorts at once, the engine merges
#   sharded       xxl.sort of the sharded table: every shard sorts at once,
#                 the engine merges here
#   local         xxl.sort of the local table (all rows on one server)
# and sorted by a, the range partitions' key, XxlSort on the shards:
#   range-stock   PostgreSQL's ordered Append: the shards one after another
#   range-append  XxlShardAppend in its place: every shard sorts at once,
#                 read in the partitions' order
#   range-sharded xxl.sort by a: the shards' rows concatenated, no merge
# and for EDGES (5M) random edges over NODES (1M) nodes, range-partitioned
# the same way, connected_components and minimum_spanning_forest:
#   cc|msf-sharded   each shard reduces its edges (its components, its
#                    forest) with pgxxl, all at once, the operator runs
#                    here over the union
#   cc|msf-fdw       xxl.on_shards = off: every edge read through
#                    postgres_fdw, the operator here
#   cc|msf-local     the same edges in one local table
# work_mem = xxl.memory = MEM (64MB) everywhere.  Reported: median time,
# ratios to stock and to stock+xxl, rows per second over the wire, the
# coordinator backend's private peak memory, and for the sharded sort each
# shard's time to its first row (its whole sort).  The answers must agree.
#
# Files: bench/out/shards.{csv,log,png}.  Environment: ROWS, MEM, ROUNDS,
# EDGES, NODES, KEEP_CLUSTER=1.  Targets (issue 49): sharded <= 0.3x stock,
# <= 0.7x stock+xxl (both for merge and for sharded); cc-sharded <= 1.5x cc-local.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-30000000}
MEM=${MEM:-64MB}
case $MEM in *[0-9]) MEM=${MEM}MB ;; esac
ROUNDS=${ROUNDS:-3}
EDGES=${EDGES:-5000000}
NODES=${NODES:-1000000}
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
CLUSTERS=(coord s1 s2 s3)
stop_all() {
	for n in "${CLUSTERS[@]}"; do
		[ -n "${DIR[$n]:-}" ] || continue
		as_pg "$PGBIN/pg_ctl" -D "${DIR[$n]}/data" -m fast -w stop >/dev/null 2>&1 || true
		rm -rf "${HOST[$n]}"
	done
	[ "${KEEP_CLUSTER:-0}" = 1 ] || rm -rf "$WORK"
}
trap stop_all EXIT
for n in "${CLUSTERS[@]}"; do
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
eper=$((EDGES / 3))
# edge g: two nodes drawn by hash, a cost in [0, 1)
edges_sql() {
	echo "SELECT g::bigint AS id, 1 + (hashint8(g) & 2147483647) % $NODES AS source,
		1 + (hashint8(g + 1234567891) & 2147483647) % $NODES AS target,
		(hashint8(g * 3) & 1048575) / 1048576.0::float8 AS cost FROM generate_series($1, $2) g"
}
for i in 1 2 3; do
	lo=$(((i - 1) * per + 1))
	hi=$((i == 3 ? ROWS : i * per))
	elo=$(((i - 1) * eper + 1))
	ehi=$((i == 3 ? EDGES : i * eper))
	q "s$i" -c "CREATE EXTENSION pgxxl" -c "
		CREATE TABLE part AS SELECT g::bigint AS a, hashint8(g)::bigint AS b FROM generate_series($lo, $hi) g" \
		-c "CREATE TABLE epart AS $(edges_sql $elo $ehi)" -c "VACUUM ANALYZE part, epart" &
done
servers=""
for i in 1 2 3; do
	servers+="CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '${HOST[s$i]}', port '${PORT[s$i]}', dbname 'postgres', fetch_size '10000');
		CREATE USER MAPPING FOR CURRENT_USER SERVER s$i;
		CREATE FOREIGN TABLE p$i PARTITION OF sharded FOR VALUES FROM ($(((i - 1) * per + 1))) TO ($((i == 3 ? ROWS + 1 : i * per + 1))) SERVER s$i OPTIONS (table_name 'part');
		CREATE FOREIGN TABLE e$i PARTITION OF edges FOR VALUES FROM ($(((i - 1) * eper + 1))) TO ($((i == 3 ? EDGES + 1 : i * eper + 1))) SERVER s$i OPTIONS (table_name 'epart');
		"
done
q coord -c "CREATE EXTENSION pgxxl" -c "CREATE EXTENSION postgres_fdw" -c "
	CREATE TABLE sharded (a bigint, b bigint) PARTITION BY RANGE (a);
	CREATE TABLE edges (id bigint, source bigint, target bigint, cost float8) PARTITION BY RANGE (id);
	$servers
	CREATE TABLE flat AS SELECT g::bigint AS a, hashint8(g)::bigint AS b FROM generate_series(1, $ROWS) g" \
	-c "CREATE TABLE eflat AS $(edges_sql 1 "$EDGES")" -c "VACUUM ANALYZE flat, eflat"
wait
for i in 1 2 3; do q coord -c "ANALYZE p$i, e$i"; done
echo "stock plan:" >>"$LOG"
q coord -c "SET xxl.sort_in_plans = off" -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM sharded ORDER BY b" >>"$LOG"
echo "merge plan:" >>"$LOG"
q coord -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" >>"$LOG"

shard_setting() { for i in 1 2 3; do q "s$i" -c "ALTER SYSTEM SET xxl.sort_in_plans = $1" -c "SELECT pg_reload_conf()" >/dev/null; done; }

# run CONFIG: one measurement; prints "secs peak_kb answer"
run() {
	local cfg=$1 stmt coord_plans=off on_shards=on
	local cc="SELECT count(*), sum(component) FROM xxl.connected_components"
	local msf="SELECT count(*), round(sum(cost)::numeric, 3) AS sum FROM xxl.minimum_spanning_forest"
	case $cfg in
		stock) shard_setting off; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" ;;
		stock+xxl) shard_setting on; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" ;;
		merge) shard_setting on; coord_plans=on; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY b OFFSET 0) s" ;;
		sharded) stmt="SELECT count(*), sum(b) FROM xxl.sort('sharded', 'b') AS s(a bigint, b bigint)" ;;
		local) stmt="SELECT count(*), sum(b) FROM xxl.sort('flat', 'b') AS s(a bigint, b bigint)" ;;
		range-stock) shard_setting on; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY a OFFSET 0) s" ;;
		range-append) shard_setting on; coord_plans=on; stmt="SELECT count(*), sum(b) FROM (SELECT * FROM sharded ORDER BY a OFFSET 0) s" ;;
		range-sharded) stmt="SELECT count(*), sum(b) FROM xxl.sort('sharded', 'a') AS s(a bigint, b bigint)" ;;
		cc-sharded) stmt="$cc('edges')" ;;
		cc-fdw) on_shards=off; stmt="$cc('edges')" ;;
		cc-local) stmt="$cc('eflat')" ;;
		msf-sharded) stmt="$msf('edges')" ;;
		msf-fdw) on_shards=off; stmt="$msf('edges')" ;;
		msf-local) stmt="$msf('eflat')" ;;
	esac
	q coord <<SQL
SET xxl.sort_in_plans = $coord_plans;
SET xxl.on_shards = $on_shards;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt \gset ans_
SELECT format('RESULT %s %s %s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]::bigint
	  - (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1]::bigint
	  - (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssFile:\s+(\d+) kB'))[1]::bigint,
	:'ans_count' || '/' || :'ans_sum');
SELECT 'SHARDS ' || (SELECT string_agg((s->>'shard') || '=' || (s->>'first_row_ms') || 'ms/' || (s->>'rows'), ' ')
	FROM json_array_elements(details::json->'shards') s) FROM xxl.last_stats() WHERE details::json->'shards' IS NOT NULL;
SQL
}

SORTS=(stock stock+xxl merge sharded local)
RANGES=(range-stock range-append range-sharded)
GRAPHS=(cc-sharded cc-fdw cc-local msf-sharded msf-fdw msf-local)
CONFIGS=("${SORTS[@]}" "${RANGES[@]}" "${GRAPHS[@]}")
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
# the answers within each group agree: the sorts with stock, the forests with the local call
oracle() { case $1 in cc-*) echo cc-local ;; msf-*) echo msf-local ;; *) echo stock ;; esac; }
for cfg in "${CONFIGS[@]}"; do
	o=$(oracle "$cfg")
	[ "${ANSWER[$cfg]}" = "${ANSWER[$o]}" ] || { echo "bench-shards: $cfg answered ${ANSWER[$cfg]}, $o ${ANSWER[$o]}" >&2; exit 1; }
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A MED
for cfg in "${CONFIGS[@]}"; do MED[$cfg]=$(median "${TIMES[$cfg]}"); done
{
	echo
	printf "%-10s %9s %9s %11s %10s %14s  %s\n" config secs "/stock" "/stock+xxl" "Mrows/s" "coord peak MB" "shards' sorts (ms to first row)"
	for cfg in "${SORTS[@]}"; do
		printf "%-10s %9.2f %9.2f %11.2f %10.1f %14.1f  %s\n" "$cfg" "${MED[$cfg]}" \
			"$(echo "${MED[$cfg]} / ${MED[stock]}" | bc -l)" "$(echo "${MED[$cfg]} / ${MED[stock+xxl]}" | bc -l)" \
			"$(echo "$ROWS / ${MED[$cfg]} / 1000000" | bc -l)" "$(echo "${PEAK[$cfg]} / 1024" | bc -l)" "${SHARDS[$cfg]:-}"
	done
	echo "(median of $ROUNDS; secs: the coordinator's clock around the statement; coord peak: its backend's"
	echo " VmHWM less shared memory and mapped files (JIT maps LLVM, ~50 MB, into plans over foreign tables);"
	echo " answers (count/sum) equal: ${ANSWER[stock]})"
	echo
	printf "%-13s %9s %12s %14s  %s\n" config secs "/range-stock" "coord peak MB" "shards (ms to first row read)"
	for cfg in "${RANGES[@]}"; do
		printf "%-13s %9.2f %12.2f %14.1f  %s\n" "$cfg" "${MED[$cfg]}" \
			"$(echo "${MED[$cfg]} / ${MED[range-stock]}" | bc -l)" "$(echo "${PEAK[$cfg]} / 1024" | bc -l)" "${SHARDS[$cfg]:-}"
	done
	echo "(ORDER BY a, the range partitions' key; XxlSort on the shards)"
	echo
	printf "%-12s %9s %9s %14s  %s\n" config secs "/local" "coord peak MB" "shards (ms to first row / rows sent)"
	for cfg in "${GRAPHS[@]}"; do
		printf "%-12s %9.2f %9.2f %14.1f  %s\n" "$cfg" "${MED[$cfg]}" \
			"$(echo "${MED[$cfg]} / ${MED[$(oracle "$cfg")]}" | bc -l)" "$(echo "${PEAK[$cfg]} / 1024" | bc -l)" "${SHARDS[$cfg]:-}"
	done
	echo "($EDGES edges over $NODES nodes; answers equal: cc ${ANSWER[cc-local]}, msf ${ANSWER[msf-local]})"
} | tee -a "$LOG"

gnuplot <<GP
set terminal pngcairo size 1200,450
set output '$PNG'
set title "$ROWS rows sorted, $EDGES edges: 3 postgres_fdw shards, $MEM (median of $ROUNDS)"
set ylabel 'seconds'
set style data histograms
set style fill solid 0.7
set boxwidth 0.6
set yrange [0:*]
set datafile separator ','
plot '-' using 2:xtic(1) title ''
stock,${MED[stock]}
stock+xxl,${MED[stock+xxl]}
merge,${MED[merge]}
sharded,${MED[sharded]}
local,${MED[local]}
range-stock,${MED[range-stock]}
range-append,${MED[range-append]}
range-sharded,${MED[range-sharded]}
cc-sharded,${MED[cc-sharded]}
cc-fdw,${MED[cc-fdw]}
cc-local,${MED[cc-local]}
msf-sharded,${MED[msf-sharded]}
msf-fdw,${MED[msf-fdw]}
msf-local,${MED[msf-local]}
e
GP
echo "bench-shards: $CSV, $PNG"
