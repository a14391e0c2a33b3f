#!/usr/bin/env bash
# run_sort_sql.sh — the SQL sort benchmark: xxl.sort / xxl.sort_into against
# PostgreSQL's own ORDER BY on the same table, budget and server, in one run.
#
# Table t: ROWS (default 50M) rows of (a bigint random, b bigint), UNLOGGED,
# vacuumed; the server restarts before the runs so shared_buffers start
# empty.  Budgets: xxl.memory = work_mem = MEM (default 64MB).  Measured,
# each in a fresh connection (server clock around the statement, then the
# backend's VmHWM):
#   consume:  SELECT count(*), sum(b) FROM (SELECT * FROM t ORDER BY a OFFSET 0) s
#             with max_parallel_workers_per_gather = 0 and = 2 (EXPLAIN is
#             checked to show the Sort), against
#             SELECT count(*), sum(b) FROM xxl.sort('t', 'a') AS s(a bigint, b bigint)
#   into:     CREATE UNLOGGED TABLE ... AS SELECT * FROM t ORDER BY a (0 and 2
#             workers), against SELECT xxl.sort_into('t', 'a', ...).
# wal_level = minimal: a table created and filled in one transaction writes
# no WAL, so the sort_into target (a regular table, created by the call) and
# the UNLOGGED CTAS target both skip WAL.
# Checked (untimed): equal counts and sums everywhere; the sort_into target
# is in order.  Output: a table with ratios, bench/out/sort_sql.{csv,log,dat,png}.
#
# Environment: ROWS, MEM, SEED, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-50000000}
MEM=${MEM:-64MB}
case $MEM in *[0-9]) MEM=${MEM}MB ;; esac	# `make bench MEM=64` means MiB
SEED=${SEED:-0.42}
OUT=bench/out
CSV=$OUT/sort_sql.csv
DAT=$OUT/sort_sql.dat
LOG=$OUT/sort_sql.log
PNG=$OUT/sort_sql.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-sort-sql: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-sort-sql: build failed, see $LOG" >&2; exit 1; }
bash scripts/deps.sh --bench >>"$LOG" 2>&1

start_bench_server bench-sort-sql "max_worker_processes = 8
max_parallel_workers = 8"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
echo "bench-sort-sql: $(psql_ -c 'SELECT xxl.version()'), $(nproc) cores, load:$(uptime | sed 's/.*load average//')"
echo "bench-sort-sql: generating t: $ROWS rows of (bigint, bigint)"
t0=$(date +%s)
psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE t AS
SELECT (random() * 9e18 - 4.5e18)::bigint AS a, g::bigint AS b FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE t;
SQL
echo "bench-sort-sql: generated in $(( $(date +%s) - t0 )) s, $(psql_ -c "SELECT pg_size_pretty(pg_table_size('t'))"); xxl.memory = work_mem = $MEM"
restart_server

echo "what,tool,workers,secs,vmhwm_kb,bytes_read,bytes_written,budget_peak,result" >"$CSV"

# measure WHAT TOOL WORKERS STATEMENT: one fresh connection, the statement
# timed by the server's clock, then VmHWM and (for pgxxl) last_stats.
measure() {
	local what=$1 tool=$2 workers=$3 stmt=$4 out line stats
	echo "== $what $tool workers=$workers: $stmt" >>"$LOG"
	out=$(psql_ 2>&1 <<SQL
SET work_mem = '$MEM';
SET xxl.memory = '$MEM';
SET max_parallel_workers_per_gather = $workers;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
\\echo ANSWER
$stmt;
SELECT format('RESULT secs=%s vmhwm_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]);
SELECT format('STATS read=%s written=%s peak=%s', (SELECT sum(b) FROM unnest(bytes_read) b),
	(SELECT sum(b) FROM unnest(bytes_written) b), memory_peak)
FROM xxl.last_stats();
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-sort-sql: $what $tool failed; see $LOG" >&2; exit 1; }
	printf '%s\n' "$out" >>"$LOG"
	line=$(printf '%s\n' "$out" | grep '^RESULT ')
	stats=$(printf '%s\n' "$out" | grep '^STATS ' || true)
	local answer secs vm rd= wr= pk=
	answer=$(printf '%s\n' "$out" | sed -n '/^ANSWER$/{n;p;q}' | grep -v '^RESULT' | tr '|' ' ' || true)
	secs=${line#*secs=}; secs=${secs%% *}
	vm=${line##*vmhwm_kb=}
	if [ "$tool" = pgxxl ]; then
		rd=$(printf '%s' "$stats" | sed -nE 's/.*read=([0-9]*).*/\1/p')
		wr=$(printf '%s' "$stats" | sed -nE 's/.*written=([0-9]*).*/\1/p')
		pk=$(printf '%s' "$stats" | sed -nE 's/.*peak=([0-9]*).*/\1/p')
	fi
	echo "$what,$tool,$workers,$secs,$vm,$rd,$wr,$pk,$answer" >>"$CSV"
}

# ORDER BY must really sort: the plan of the consuming query has a Sort.
for w in 0 2; do
	plan=$(psql_ -c "SET max_parallel_workers_per_gather = $w" \
		-c "EXPLAIN (COSTS OFF) SELECT count(*), sum(b) FROM (SELECT * FROM t ORDER BY a OFFSET 0) s")
	printf 'plan with %s workers:\n%s\n' "$w" "$plan" >>"$LOG"
	grep -q 'Sort' <<<"$plan" || { echo "bench-sort-sql: the ORDER BY plan has no Sort" >&2; exit 1; }
done

echo "bench-sort-sql: consuming the sorted rows (count, sum)"
measure consume orderby 0 "SELECT count(*), sum(b) FROM (SELECT * FROM t ORDER BY a OFFSET 0) s"
measure consume orderby 2 "SELECT count(*), sum(b) FROM (SELECT * FROM t ORDER BY a OFFSET 0) s"
measure consume pgxxl 0 "SELECT count(*), sum(b) FROM xxl.sort('t', 'a') AS s(a bigint, b bigint)"
echo "bench-sort-sql: into a new table"
psql_ -c "DROP TABLE IF EXISTS c0, c2, x0" >>"$LOG" 2>&1
measure into orderby 0 "CREATE UNLOGGED TABLE c0 AS SELECT * FROM t ORDER BY a"
measure into orderby 2 "CREATE UNLOGGED TABLE c2 AS SELECT * FROM t ORDER BY a"
measure into pgxxl 0 "SELECT xxl.sort_into('t', 'a', 'x0') AS n"

# --- checks (untimed) -----------------------------------------------------------------

expect=$(psql_ -c "SELECT count(*) || ' ' || sum(b) FROM t")
for row in $(awk -F, '$1 == "consume" { print $2 ":" $3 ":" $9 }' "$CSV" | tr ' ' '_'); do
	got=${row##*:}; got=${got//_/ }
	[ "$got" = "$expect" ] || { echo "bench-sort-sql: ${row%:*} answered '$got', expected '$expect'" >&2; exit 1; }
done
for tbl in c0 c2 x0; do
	got=$(psql_ -c "SELECT count(*) || ' ' || sum(b) FROM $tbl")
	[ "$got" = "$expect" ] || { echo "bench-sort-sql: $tbl holds '$got', expected '$expect'" >&2; exit 1; }
done
bad=$(psql_ -c "SET synchronize_seqscans = off" -c "SELECT count(*) FROM (SELECT a, lag(a) OVER () AS p FROM x0) s WHERE p > a")
[ "$bad" = 0 ] || { echo "bench-sort-sql: the sort_into target is not in order ($bad inversions)" >&2; exit 1; }
echo "bench-sort-sql: checks ok (count and sum everywhere, sort_into target in order)"

# --- report -----------------------------------------------------------------------------

awk -F, -v rows="$ROWS" -v mem="$MEM" '
	NR == 1 { next }
	{ t[$1 "," $2 "," $3] = $4; vm[$1 "," $2 "," $3] = $5
	  if ($2 == "pgxxl") { io[$1] = ($6 + $7) / 1048576; pk[$1] = $8 / 1048576 } }
	END {
		printf "\n%-34s %10s %10s %12s %12s\n", rows " rows, " mem, "time [s]", "VmHWM [MB]", "pgxxl/this", "xxl I/O [MB]"
		split("consume into", whats, " ")
		for (i = 1; i <= 2; i++) {
			w = whats[i]; x = t[w ",pgxxl,0"]
			label = (w == "consume") ? "count, sum of sorted rows" : "into a new table"
			printf "%s\n", label
			printf "  %-32s %10.2f %10.1f %12.2f\n", (w == "consume" ? "ORDER BY" : "CTAS ORDER BY") ", no workers", t[w ",orderby,0"], vm[w ",orderby,0"] / 1024, x / t[w ",orderby,0"]
			printf "  %-32s %10.2f %10.1f %12.2f\n", (w == "consume" ? "ORDER BY" : "CTAS ORDER BY") ", 2 workers", t[w ",orderby,2"], vm[w ",orderby,2"] / 1024, x / t[w ",orderby,2"]
			printf "  %-32s %10.2f %10.1f %12s %12.0f\n", (w == "consume" ? "xxl.sort" : "xxl.sort_into"), x, vm[w ",pgxxl,0"] / 1024, "1.00", io[w]
		}
		printf "\nratio sort_into / CTAS ORDER BY = %.2f (target <= 0.33)\n", t["into,pgxxl,0"] / t["into,orderby,0"]
		printf "ratio xxl.sort consume / ORDER BY = %.2f (target <= 0.2)\n", t["consume,pgxxl,0"] / t["consume,orderby,0"]
	}' "$CSV"

awk -F, 'NR > 1 { t[$1 "," $2 "," $3] = $4 }
	END {
		print "# what orderby0 orderby2 pgxxl"
		print "\"count, sum of sorted rows\"", t["consume,orderby,0"], t["consume,orderby,2"], t["consume,pgxxl,0"]
		print "\"into a new table\"", t["into,orderby,0"], t["into,orderby,2"], t["into,pgxxl,0"]
	}' "$CSV" >"$DAT"
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'; rows='$ROWS'; mem='$MEM'" bench/plot_sort_sql.gp
	echo "chart: $PNG  csv: $CSV  log: $LOG"
fi
