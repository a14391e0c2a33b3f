#!/usr/bin/env bash
# run_scale_sort.sh — one ORDER BY at budgets from what holds it in memory
# down to 1MB, XxlSort (xxl.sort_in_plans on) beside PostgreSQL's Sort (off)
# at each budget, in one run on one server: the sort part of
# `make bench-scale` (issue 46: every point completes, no cliff below
# "fits", I/O near data x passes).
#
# Table t: ROWS (10M) rows of (k bigint random, v text = md5), in a C
# database.  Query: SELECT count(*) FROM (SELECT * FROM t ORDER BY v OFFSET
# 0) s, no parallel workers, work_mem = xxl.memory = each of MEMS.  Each
# point runs EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ROUNDS times per
# side, alternated, in fresh connections; the median execution time counts.
# From the plan: XxlSort's runs, merge passes, peak memory, records spilled
# and bytes written and read; the Sort's method and space.  The answers
# (count and a checksum of the sorted column's order) are compared.
#
# Output: a table (time on/off and ratio, time against the in-memory point,
# passes, written / spilled, written / (spilled x passes), peak) and
# bench/out/scale_sort.{csv,dat,png,log}.
#
# Environment: ROWS, MEMS ("1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB"), ROUNDS
# (1), SEED, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-10000000}
MEMS=${MEMS:-1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB}
ROUNDS=${ROUNDS:-1}
SEED=${SEED:-0.42}
OUT=bench/out
CSV=$OUT/scale_sort.csv
DAT=$OUT/scale_sort.dat
LOG=$OUT/scale_sort.log
PNG=$OUT/scale_sort.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-scale (sort): build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-scale: build failed, see $LOG" >&2; exit 1; }
bash scripts/deps.sh --bench >>"$LOG" 2>&1
start_bench_server bench-scale "shared_preload_libraries = 'pgxxl'"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d scale "$@"; }
"$PGBIN/psql" -X -q -d postgres -c "CREATE DATABASE scale TEMPLATE template0 ENCODING UTF8 LC_COLLATE 'C' LC_CTYPE 'C'" >>"$LOG" 2>&1
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
echo "bench-scale (sort): $(nproc) cores, load:$(uptime | sed 's/.*load average//'); generating t ($ROWS rows)"
psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE t AS
SELECT (random() * 9e18 - 4.5e18)::bigint AS k, md5(g::text) AS v FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE t;
SQL
HEAP_MB=$(psql_ -c "SELECT pg_relation_size('t') / 1048576")

STMT="SELECT count(*), sum(hashtext(v) % 1000 * (row_number % 7)) FROM (SELECT v, row_number() OVER () FROM (SELECT * FROM t ORDER BY v OFFSET 0) o) s"
echo "rows,mem,mode,node,ms,runs,passes,peak_kb,spilled_kb,written_kb,read_kb,method,space_kb,answer" >"$CSV"

# One measurement: the plan's numbers and the answer, in a fresh connection.
measure() {
	local mem=$1 mode=$2 out
	out=$(psql_ 2>&1 <<SQL
SET work_mem = '$mem';
SET xxl.memory = '$mem';
SET max_parallel_workers_per_gather = 0;
SET xxl.sort_in_plans = $mode;
SET xxl.sort_in_plans_threshold = 0;
DO \$\$
DECLARE j jsonb; s jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $STMT' INTO j;
  s := jsonb_path_query_first(j, '$.** ? (exists (@."Sort Key"))');
  RAISE NOTICE 'RESULT %,%,%,%,%,%,%,%,%,%,%', coalesce(s->>'Custom Plan Provider', s->>'Node Type'),
    j->0->>'Execution Time', coalesce(s->>'Runs', ''), coalesce(s->>'Merge Passes', ''),
    coalesce(s->>'Peak Memory', ''), coalesce(s->>'Spilled', ''), coalesce(s->>'Spill Written', ''),
    coalesce(s->>'Spill Read', ''), coalesce(s->>'Sort Method', ''), coalesce(s->>'Sort Space Used', ''), 'x';
END \$\$;
\\echo ANSWER
$STMT;
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-scale: $mem ($mode) failed; see $LOG" >&2; exit 1; }
	printf '== %s %s\n%s\n' "$mem" "$mode" "$out" >>"$LOG"
	local line answer
	line=$(printf '%s\n' "$out" | grep -o 'RESULT .*' | sed 's/^RESULT //; s/,x$//')
	answer=$(printf '%s\n' "$out" | sed -n '/^ANSWER$/{n;p;q}' | tr '|' ' ')
	local node ms rest
	node=${line%%,*}
	rest=${line#*,}
	ms=${rest%%,*}
	rest=${rest#*,}
	echo "$ROWS,$mem,$mode,$node,$ms,$rest,$answer" >>"$CSV"
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
field() { awk -F, -v m="$1" -v o="$2" -v c="$3" '$2 == m && $3 == o {print $c}' "$CSV"; }

for mem in $MEMS; do
	for ((round = 1; round <= ROUNDS; round++)); do
		measure "$mem" on
		measure "$mem" off
	done
done

answers=$(cut -d, -f14 "$CSV" | tail -n +2 | sort -u | wc -l)
[ "$answers" = 1 ] || { echo "bench-scale: answers differ between budgets or sides; see $CSV" >&2; exit 1; }

printf '\n%s rows (%s MB of heap), ORDER BY v (md5 text), C collation\n' "$ROWS" "$HEAP_MB"
printf '%-6s %-8s %8s %8s %6s %8s %6s %6s %9s %9s %8s %9s\n' budget node "on s" "off s" on/off "on/first" runs passes "wr/spill" "wr/(s*p)" "peak kB" "off sort"
: >"$DAT"
first=""
for mem in $MEMS; do
	on=$(field "$mem" on 5 | median)
	off=$(field "$mem" off 5 | median)
	node=$(field "$mem" on 4 | sed -n 1p)
	runs=$(field "$mem" on 6 | sed -n 1p)
	passes=$(field "$mem" on 7 | sed -n 1p)
	peak=$(field "$mem" on 8 | sed -n 1p)
	spilled=$(field "$mem" on 9 | sed -n 1p)
	written=$(field "$mem" on 10 | sed -n 1p)
	method=$(field "$mem" off 12 | sed -n 1p)
	[ -n "$first" ] || first=$on
	wr_sp=$( [ -n "$spilled" ] && [ "${spilled:-0}" != 0 ] && echo "scale=2; $written / $spilled" | bc || echo -)
	wr_sp_p=$( [ "$wr_sp" != - ] && [ -n "$passes" ] && [ "$passes" != 0 ] && echo "scale=2; $written / ($spilled * $passes)" | bc || echo -)
	printf '%-6s %-8s %8.2f %8.2f %6.2f %8.2f %6s %6s %9s %9s %8s %9s\n' "$mem" "$node" "$(echo "$on / 1000" | bc -l)" \
		"$(echo "$off / 1000" | bc -l)" "$(echo "$on / $off" | bc -l)" "$(echo "$on / $first" | bc -l)" \
		"${runs:-0}" "${passes:-0}" "$wr_sp" "$wr_sp_p" "${peak:--}" "$method"
	mb=$(echo "$mem" | sed 's/GB/*1024/; s/MB//' | bc)
	printf '%s %s %s %s %s\n' "$mb" "$(echo "$on / 1000" | bc -l)" "$(echo "$off / 1000" | bc -l)" \
		"$(echo "${written:-0} / 1024" | bc -l)" "${passes:-0}" >>"$DAT"
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "dat='$DAT'; png='$PNG'; title='ORDER BY v of $ROWS rows ($HEAP_MB MB heap)'" bench/plot_scale_sort.gp >>"$LOG" 2>&1 &&
		echo "bench-scale (sort): chart $PNG"
fi
echo "bench-scale (sort): $CSV, $LOG"
