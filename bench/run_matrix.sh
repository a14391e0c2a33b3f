#!/usr/bin/env bash
# run_matrix.sh — xxl.matmul against SQL's join on the inner index and
# GROUP BY (i, j) with sum(a.v * b.v) (hash aggregation allowed, work_mem =
# SQL_WORK_MEM), side by side in one run on one server: `make bench-matrix`.
#
# Matrices (tables of (i bigint, j bigint, v float8)):
#   sparse: N x N with NNZ entries whose rows follow a power law (row
#     floor(N * random()^SKEW), column uniform), multiplied as Aᵀ·A (its
#     rows are the inner index: a row of n entries makes n² partial
#     products);
#   dense: DENSE x DENSE, every cell, multiplied as A·A; SQL's join would
#     make DENSE³ rows, so SQL runs on a DENSE_SQL x DENSE_SQL one, and
#     pgxxl on both.
# pgxxl at each xxl.memory of MEMS.  Each measurement runs in a fresh
# connection after a server restart (a cold cache: VmHWM counts the shared
# pages a backend touches): the time (the server's clock around the
# statement), the bytes spilled (pgxxl: xxl.last_stats(); SQL: the
# database's temp_bytes), the backend's peak memory (VmHWM), and for the
# dense products GFLOP/s (2 n³ / time) against the machine's peak for the
# cores used (PEAK_GFLOPS, else cores x MHz x 16: two 256-bit FMA pipes).
# The answers (rows, and the sum of the values to 1e-6 relative) are
# compared.
#
# Output: a table of times, ratios, spill and peak, and
# bench/out/matrix.{csv,dat,png,log}.
#
# Environment: N (1000000), NNZ (10000000), SKEW (1.5), DENSE (4000),
# DENSE_SQL (500), MEMS ("256MB 32MB"), SQL_WORK_MEM (256MB), SEED,
# PEAK_GFLOPS, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

N=${N:-1000000}
NNZ=${NNZ:-10000000}
SKEW=${SKEW:-1.5}
DENSE=${DENSE:-4000}
DENSE_SQL=${DENSE_SQL:-500}
MEMS=${MEMS:-256MB 32MB}
SQL_WORK_MEM=${SQL_WORK_MEM:-256MB}
SEED=${SEED:-0.42}
OUT=bench/out
CSV=$OUT/matrix.csv
DAT=$OUT/matrix.dat
LOG=$OUT/matrix.log
PNG=$OUT/matrix.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-matrix: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-matrix: build failed, see $LOG" >&2; exit 1; }
start_bench_server bench-matrix "shared_preload_libraries = 'pgxxl'"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
CORES=$(nproc)
MHZ=$(awk -F: '/cpu MHz/ {print int($2); exit}' /proc/cpuinfo)
PEAK=${PEAK_GFLOPS:-$(echo "$CORES * $MHZ * 16 / 1000" | bc)}
echo "bench-matrix: $CORES cores at $MHZ MHz (peak $PEAK GFLOP/s), load:$(uptime | sed 's/.*load average//')"
echo "bench-matrix: generating the sparse $N x $N ($NNZ entries, rows ~ random()^$SKEW) and dense $DENSE x $DENSE, $DENSE_SQL x $DENSE_SQL"
psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE sparse AS
SELECT floor($N * power(random(), $SKEW))::bigint AS i, floor(random() * $N)::bigint AS j,
	(random() * 2 - 1)::float8 AS v
FROM generate_series(1, $NNZ);
CREATE UNLOGGED TABLE dense AS
SELECT i::bigint, j::bigint, (random() * 2 - 1)::float8 AS v
FROM generate_series(1, $DENSE) i, generate_series(1, $DENSE) j;
CREATE UNLOGGED TABLE dense_sql AS
SELECT i::bigint, j::bigint, (random() * 2 - 1)::float8 AS v
FROM generate_series(1, $DENSE_SQL) i, generate_series(1, $DENSE_SQL) j;
VACUUM ANALYZE sparse, dense, dense_sql;
SQL
PRODUCTS=$(psql_ -c "SELECT sum(n * n) FROM (SELECT count(*) AS n FROM sparse GROUP BY i) s")
echo "bench-matrix: the sparse Aᵀ·A makes $PRODUCTS partial products"

# query WHO CASE: the statement
query() {
	case $1,$2 in
	xxl,sparse) echo "SELECT count(*), sum(v) FROM xxl.matmul('sparse', 'sparse', true)" ;;
	xxl,dense) echo "SELECT count(*), sum(v) FROM xxl.matmul('dense', 'dense')" ;;
	xxl,dense_sql) echo "SELECT count(*), sum(v) FROM xxl.matmul('dense_sql', 'dense_sql')" ;;
	sql,sparse) echo "SELECT count(*), sum(v) FROM (SELECT a.j AS i, b.j, sum(a.v * b.v) AS v
		FROM sparse a JOIN sparse b ON a.i = b.i GROUP BY 1, 2 HAVING sum(a.v * b.v) <> 0) s" ;;
	sql,dense_sql) echo "SELECT count(*), sum(v) FROM (SELECT a.i, b.j, sum(a.v * b.v) AS v
		FROM dense_sql a JOIN dense_sql b ON a.j = b.i GROUP BY 1, 2 HAVING sum(a.v * b.v) <> 0) s" ;;
	esac
}

# run WHO CASE MEM: measure and append to the CSV
echo "who,case,mem,secs,spill_mb,peak_mb,rows,sum,detail" >"$CSV"
run() {
	local who=$1 case=$2 mem=$3 out secs answer spill peak detail
	restart_server
	out=$(psql_ 2>&1 <<SQL
SET xxl.memory = '$mem';
SET work_mem = '$SQL_WORK_MEM';
SET max_parallel_workers_per_gather = 0;
SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database();
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
\\echo ANSWER
$(query "$who" "$case");
\\echo STATS
SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3);
SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1];
SELECT CASE WHEN '$who' = 'xxl' THEN concat_ws(' ', details->>'path', 'tile=' || (details->>'tile'),
	'pieces=' || (details->>'pieces'), 'passes=' || merge_passes,
	(SELECT sum(b) FROM unnest(bytes_written) b)) END FROM xxl.last_stats();
SELECT pg_stat_force_next_flush();
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-matrix: $who $case at $mem failed; see $LOG" >&2; exit 1; }
	printf '== %s %s %s\n%s\n' "$who" "$case" "$mem" "$out" >>"$LOG"
	local tb0 tb1
	tb0=$(printf '%s\n' "$out" | sed -n 1p)
	tb1=$(psql_ -c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()")
	answer=$(printf '%s\n' "$out" | sed -n '/^ANSWER$/{n;p;q}')
	secs=$(printf '%s\n' "$out" | sed -n '/^STATS$/{n;p;q}')
	peak=$(printf '%s\n' "$out" | sed -n '/^STATS$/{n;n;p;q}')
	detail=$(printf '%s\n' "$out" | sed -n '/^STATS$/{n;n;n;p;q}')
	if [ "$who" = xxl ]; then
		spill=$(echo "${detail##* }" | awk '{printf "%.0f", $1 / 1048576}')
		detail=${detail% *}
	else
		spill=$(echo "($tb1 - $tb0) / 1048576" | bc)
	fi
	echo "$who,$case,$mem,$secs,$spill,$((peak / 1024)),${answer%%|*},${answer#*|},$detail" >>"$CSV"
}

for mem in $MEMS; do
	run xxl sparse "$mem"
	run xxl dense "$mem"
	run xxl dense_sql "$mem"
done
run sql sparse "$SQL_WORK_MEM"
run sql dense_sql "$SQL_WORK_MEM"

# the answers: rows equal, sums equal to 1e-6 relative
for c in sparse dense_sql; do
	awk -F, -v c="$c" '$2 == c {rows[$7]++; s[NR] = $8} END {
		n = 0; for (r in rows) n++;
		if (n != 1) exit 1;
		for (a in s) for (b in s) if ((s[a] - s[b]) ^ 2 > 1e-12 * (s[a] ^ 2 + 1)) exit 1 }' "$CSV" ||
		{ echo "bench-matrix: answers differ for $c; see $CSV" >&2; exit 1; }
done

printf '\n%-6s %-10s %-6s %9s %8s %9s %8s %s\n' who case mem secs ratio "spill MB" "peak MB" detail
: >"$DAT"
for c in sparse dense_sql dense; do
	sql=$(awk -F, -v c="$c" '$1 == "sql" && $2 == c {print $4}' "$CSV")
	awk -F, -v c="$c" -v sql="$sql" -v dense="$DENSE" -v dsql="$DENSE_SQL" -v peak="$PEAK" '$2 == c {
		n = c == "dense" ? dense : dsql;
		ratio = sql != "" ? sprintf("%8.3f", $4 / sql) : "       -";
		gf = c != "sparse" && $1 == "xxl" ? sprintf(" %.1f GFLOP/s (%.0f%% of %s)", 2 * n ^ 3 / $4 / 1e9,
			100 * 2 * n ^ 3 / $4 / 1e9 / peak, peak) : "";
		printf "%-6s %-10s %-6s %9.2f %s %9s %8s %s%s\n", $1, $2, $3, $4, ratio, $5, $6, $9, gf }' "$CSV"
	awk -F, -v c="$c" '$2 == c {printf "\"%s %s %s\" %s\n", $1, $2, $3, $4}' "$CSV" >>"$DAT"
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "dat='$DAT'; png='$PNG'" bench/plot_matrix.gp >>"$LOG" 2>&1 &&
		echo "bench-matrix: chart $PNG"
fi
echo "bench-matrix: $CSV, $LOG"
