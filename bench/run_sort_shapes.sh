#!/usr/bin/env bash
# run_sort_shapes.sh — ORDER BY of key shapes and collations with
# xxl.sort_in_plans on (XxlSort, or PostgreSQL's Sort where the planner
# keeps it) against off (PostgreSQL's Sort), side by side in one run on one
# server: `make bench-sort-shapes`.
#
# Databases: one per default collation (C, C.UTF-8, en_US.UTF-8, and ICU
# en-US as the provider of "icu"), each with t: ROWS rows of (k bigint, v text) with v = md5(k), k random.
# Shapes, each `SELECT count(*) FROM (SELECT * FROM t ORDER BY <shape>
# OFFSET 0) s` with no parallel workers:
#   k, v      v                v, k      k, v COLLATE "C"
#   v COLLATE "en_US.utf8"     v COLLATE "en-US-x-icu"
# Budgets: work_mem = xxl.memory = each of MEMS.  Each configuration runs
# ROUNDS times, alternated, in a fresh connection; the median counts (the
# server's clock around the statement).  The answers are compared, and so
# is the plan: "on" says which node sorted (XxlSort or Sort).
#
# Output: a table of times and ratios (on / off) and
# bench/out/sort_shapes.{csv,dat,png,log}.  Target (issue 45): every ratio
# at most 0.7, none above 1.0.
#
# Environment: ROWS (2000000; several: "2000000 20000000"), MEMS ("16MB
# 64MB"), DBS ("c c_utf8 en_us icu"), SHAPES (indexes into the list above,
# 1-6), ROUNDS (3), SEED, KEEP_CLUSTER=1.
set -Eeuo pipefail
# which command stopped the run, should one (a 141 once came without a word)
trap 'echo "bench-sort-shapes: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-2000000}
MEMS=${MEMS:-16MB 64MB}
DBS=${DBS:-c c_utf8 en_us icu}
SHAPES=${SHAPES:-1 2 3 4 5 6}
ROUNDS=${ROUNDS:-3}
SEED=${SEED:-0.42}
OUT=bench/out
CSV=$OUT/sort_shapes.csv
DAT=$OUT/sort_shapes.dat
LOG=$OUT/sort_shapes.log
PNG=$OUT/sort_shapes.png
mkdir -p "$OUT"
: >"$LOG"

SHAPE[1]='k, v'
SHAPE[2]='v'
SHAPE[3]='v, k'
SHAPE[4]='k, v COLLATE "C"'
SHAPE[5]='v COLLATE "en_US.utf8"'
SHAPE[6]='v COLLATE "en-US-x-icu"'
declare -A LOCALE=([c]=C [c_utf8]=C.UTF-8 [en_us]=en_US.UTF-8 [icu]=C.UTF-8)
declare -A PROVIDER=([icu]="LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")

echo "bench-sort-shapes: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-sort-shapes: build failed, see $LOG" >&2; exit 1; }
bash scripts/deps.sh --bench >>"$LOG" 2>&1
start_bench_server bench-sort-shapes "shared_preload_libraries = 'pgxxl'"

psql_() { local db=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
echo "bench-sort-shapes: $(nproc) cores, load:$(uptime | sed 's/.*load average//')"
for db in $DBS; do
	psql_ postgres -c "CREATE DATABASE $db TEMPLATE template0 ENCODING UTF8 LC_COLLATE '${LOCALE[$db]}' LC_CTYPE '${LOCALE[$db]}' ${PROVIDER[$db]:-}" >>"$LOG" 2>&1
	psql_ "$db" -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
done

echo "rows,mem,db,shape,mode,node,secs,answer" >"$CSV"

# run ROWS DB: (re)make t in DB with ROWS rows.
make_table() {
	psql_ "$2" >>"$LOG" 2>&1 <<SQL
SET xxl.sort_in_plans = off;
DROP TABLE IF EXISTS t;
SELECT setseed($SEED);
CREATE UNLOGGED TABLE t AS
SELECT (random() * 9e18 - 4.5e18)::bigint AS k, md5(g::text) AS v FROM generate_series(1, $1) g;
VACUUM ANALYZE t;
CHECKPOINT;
SQL
	sync
}

# warm_up MEM DB: one unmeasured sort each way after the table is made, so
# that the first shape does not pay for the new table's first reads and
# the kernel's writeback of its pages (the first cell of a run was up to
# half again slower on XxlSort's side, which uses the second core).
warm_up() {
	local mode
	for mode in on off; do
		psql_ "$2" -c "SET work_mem = '$1'" -c "SET xxl.memory = '$1'" -c "SET xxl.sort_in_plans = $mode" \
			-c "SELECT count(*) FROM (SELECT * FROM t ORDER BY k OFFSET 0) s" >>"$LOG" 2>&1
	done
}

# measure ROWS MEM DB SHAPE MODE: one timed run in a fresh connection; prints secs.
measure() {
	local rows=$1 mem=$2 db=$3 shape=$4 mode=$5 out line secs answer node
	local stmt="SELECT count(*), sum(hashtext(v) % 1000) FROM (SELECT * FROM t ORDER BY ${SHAPE[$shape]} OFFSET 0) s"
	node=$(psql_ "$db" -c "SET work_mem = '$mem'" -c "SET max_parallel_workers_per_gather = 0" \
		-c "SET xxl.sort_in_plans = $mode" -c "EXPLAIN (COSTS OFF) $stmt" | grep -oE 'XxlSort|Sort' | sed -n 1p)
	out=$(psql_ "$db" 2>&1 <<SQL
SET work_mem = '$mem';
SET xxl.memory = '$mem';
SET max_parallel_workers_per_gather = 0;
SET xxl.sort_in_plans = $mode;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
\\echo ANSWER
$stmt;
SELECT format('RESULT secs=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3));
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-sort-shapes: ${SHAPE[$shape]} ($mode, $db) failed; see $LOG" >&2; exit 1; }
	printf '== %s %s %s %s %s\n%s\n' "$rows" "$mem" "$db" "${SHAPE[$shape]}" "$mode" "$out" >>"$LOG"
	line=$(printf '%s\n' "$out" | grep '^RESULT ')
	answer=$(printf '%s\n' "$out" | sed -n '/^ANSWER$/{n;p}' | tr '|' ' ')
	secs=${line#*secs=}
	echo "$rows,$mem,$db,$shape,$mode,$node,$secs,$answer" >>"$CSV"
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

printf '\n%-9s %-5s %-7s %-26s %-8s %9s %9s %7s\n' rows mem db "ORDER BY" node on off ratio
: >"$DAT"
for rows in $ROWS; do
	for db in $DBS; do
		make_table "$rows" "$db"
		for mem in $MEMS; do
			warm_up "$mem" "$db"
			for shape in $SHAPES; do
				for ((round = 1; round <= ROUNDS; round++)); do
					measure "$rows" "$mem" "$db" "$shape" on
					measure "$rows" "$mem" "$db" "$shape" off
				done
				pick() { awk -F, -v r="$rows" -v m="$mem" -v d="$db" -v s="$shape" -v o="$1" \
					'$1 == r && $2 == m && $3 == d && $4 == s && $5 == o {print $'"$2"'}' "$CSV"; }
				on=$(pick on 7 | median)
				off=$(pick off 7 | median)
				node=$(pick on 6 | sed -n 1p)
				answers=$(awk -F, -v r="$rows" -v m="$mem" -v d="$db" -v s="$shape" \
					'$1 == r && $2 == m && $3 == d && $4 == s {print $8}' "$CSV" | sort -u | wc -l)
				[ "$answers" = 1 ] || { echo "bench-sort-shapes: answers differ for ${SHAPE[$shape]} in $db" >&2; exit 1; }
				ratio=$(echo "$on / $off" | bc -l)
				printf '%-9s %-5s %-7s %-26s %-8s %8.2fs %8.2fs %7.2f\n' "$rows" "$mem" "$db" "${SHAPE[$shape]}" \
					"$node" "$on" "$off" "$ratio"
				# (the chart's labels in double quotes: the shape's own as single ones)
				printf '"%s %s %s" "%s" %s %s %.3f\n' "$db" "$mem" "$rows" "${SHAPE[$shape]//\"/\'}" "$on" "$off" \
					"$ratio" >>"$DAT"
			done
		done
	done
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "dat='$DAT'; png='$PNG'" bench/plot_sort_shapes.gp >>"$LOG" 2>&1 &&
		echo "bench-sort-shapes: chart $PNG"
fi
echo "bench-sort-shapes: $CSV, $LOG"
