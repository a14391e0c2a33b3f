#!/usr/bin/env bash
# run_sort_duckdb.sh — sorting a table into a new one, pgxxl against DuckDB
# (issue 50), side by side in one run: `make bench-sort-duckdb`, also the
# last part of `make bench-sort-sql`.
#
# The rows: ROWS (50M) of (a bigint random, b bigint serial), made once in
# PostgreSQL and copied to DuckDB through a CSV file, so both sides sort the
# same rows; each side's table is on disk (PostgreSQL's heap, DuckDB's
# database file).  At every budget of MEMS (16MB 64MB 256MB 1GB), ROUNDS
# times, alternated, each in a fresh connection or process:
#   DuckDB    CREATE TABLE s AS SELECT * FROM t ORDER BY a
#             (memory_limit = the budget, threads = THREADS, spilling to a
#             directory beside the cluster)
#   CTAS      CREATE TABLE s AS SELECT * FROM t ORDER BY a on PostgreSQL,
#             work_mem = xxl.memory = the budget, sort_in_plans on (the
#             plan's XxlSort is checked), no parallel workers
#   sort_into SELECT xxl.sort_into('t', 'a', 's'), xxl.memory = the budget
# pgxxl's operators use THREADS threads too (xxl.threads).  The server has
# wal_level = minimal, so a table created and filled in one transaction
# writes no WAL (DuckDB's CTAS does not log its rows either).
#
# Measured: the median time, the process's peak resident memory (DuckDB:
# also what it held before the statement), and the bytes it dirtied for
# storage (/proc/<pid>/io write_bytes: the new table plus any spill).
# Checked, untimed: every target holds t's count and sum(b), in order of a.
# A DuckDB failure (its out-of-memory error at small budgets) is reported as
# such and the run goes on.
#
# Output: a table with the ratios pgxxl / DuckDB, and
# bench/out/sort_duckdb.{csv,dat,log,png}.  Target (issue 50): CTAS and
# sort_into at most 0.5 of DuckDB, and finishing at 16MB.
#
# Environment: ROWS, MEMS, ROUNDS (1), THREADS (2), SEED, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-50000000}
MEMS=${MEMS:-16MB 64MB 256MB 1GB}
ROUNDS=${ROUNDS:-1}
THREADS=${THREADS:-2}
SEED=${SEED:-0.42}
DUCKDB_VERSION=1.5.6-r.1
OUT=bench/out
CSV=$OUT/sort_duckdb.csv
DAT=$OUT/sort_duckdb.dat
LOG=$OUT/sort_duckdb.log
PNG=$OUT/sort_duckdb.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-sort-duckdb: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-sort-duckdb: build failed, see $LOG" >&2; exit 1; }
bash scripts/deps.sh --bench >>"$LOG" 2>&1

# DuckDB from the npm registry, for this benchmark only (build/ is not committed)
# (Debian's Node.js only where there is none: a machine's own may bundle npm)
command -v node >/dev/null && command -v npm >/dev/null || install_missing bench-sort-duckdb nodejs npm
DUCK_DIR=$REPO/build/duckdb
if [ ! -f "$DUCK_DIR/node_modules/@duckdb/node-api/package.json" ] ||
	! grep -q "\"version\": \"$DUCKDB_VERSION\"" "$DUCK_DIR/node_modules/@duckdb/node-api/package.json"; then
	echo "bench-sort-duckdb: installing @duckdb/node-api $DUCKDB_VERSION from npm"
	mkdir -p "$DUCK_DIR"
	(cd "$DUCK_DIR" && npm install --no-audit --no-fund --loglevel=error "@duckdb/node-api@$DUCKDB_VERSION") >>"$LOG" 2>&1 ||
		{ echo "bench-sort-duckdb: npm install failed, see $LOG" >&2; exit 1; }
fi
export DUCKDB_NODE_MODULES=$DUCK_DIR/node_modules
duck() { node bench/duckdb_sort.mjs "$@"; }

start_bench_server bench-sort-duckdb "shared_preload_libraries = 'pgxxl'"
psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
DUCK_DB=$WORK/duck/t.duckdb
DUCK_TMP=$WORK/duck/tmp
rm -rf "$WORK/duck"
mkdir -p "$DUCK_TMP"

echo "bench-sort-duckdb: $(psql_ -c 'SELECT xxl.version()'), DuckDB $DUCKDB_VERSION, $(nproc) cores, load:$(uptime | sed 's/.*load average//')"
echo "bench-sort-duckdb: generating t: $ROWS rows of (bigint, bigint), and its copy in DuckDB"
psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE TABLE t AS
SELECT (random() * 9e18 - 4.5e18)::bigint AS a, g::bigint AS b FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE t;
\\copy t TO '$WORK/duck/t.csv' (FORMAT csv)
SQL
expect=$(psql_ -c "SELECT count(*) || ' ' || sum(b) FROM t")
loaded=$(duck load "$DUCK_DB" "$WORK/duck/t.csv")
rm -f "$WORK/duck/t.csv"
[ "$loaded" = "LOADED $expect" ] || { echo "bench-sort-duckdb: DuckDB loaded '$loaded', expected '$expect'" >&2; exit 1; }
restart_server

echo "mem,tool,round,secs,vmhwm_kb,base_kb,written,answer" >"$CSV"

# pg MEM TOOL ROUND: one fresh connection; the statement timed by the
# server's clock, then VmHWM and write_bytes of the backend.
pg() {
	local mem=$1 tool=$2 round=$3 stmt out line io0 io1
	case $tool in
	ctas) stmt="CREATE TABLE s AS SELECT * FROM t ORDER BY a" ;;
	sort_into) stmt="SELECT xxl.sort_into('t', 'a', 's')" ;;
	esac
	psql_ -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s"
	out=$(psql_ 2>&1 <<SQL
SET work_mem = '$mem';
SET xxl.memory = '$mem';
SET xxl.threads = $THREADS;
SET max_parallel_workers_per_gather = 0;
SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/io'), 'write_bytes:\s+(\d+)'))[1] AS io0,
	extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s vmhwm_kb=%s written=%s',
	round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1],
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/io'), 'write_bytes:\s+(\d+)'))[1]::bigint - :io0);
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-sort-duckdb: $tool at $mem failed; see $LOG" >&2; exit 1; }
	printf '== %s %s %s\n%s\n' "$mem" "$tool" "$round" "$out" >>"$LOG"
	line=$(printf '%s\n' "$out" | grep '^RESULT ')
	local secs=${line#*secs=} vm=${line#*vmhwm_kb=} wr=${line#*written=} answer
	secs=${secs%% *}; vm=${vm%% *}
	answer=$(psql_ -c "SET synchronize_seqscans = off" -c "SELECT count(*) || ' ' || sum(b) || ' ' ||
		count(*) FILTER (WHERE p > a) FROM (SELECT a, b, lag(a) OVER () AS p FROM s) x")
	echo "$mem,$tool,$round,$secs,$vm,,$wr,$answer" >>"$CSV"
}

# duck_sort MEM ROUND: one DuckDB process.
duck_sort() {
	local mem=$1 round=$2 out line
	out=$(duck sort "$DUCK_DB" "$mem" "$THREADS" "$DUCK_TMP" 2>&1) ||
		{ printf '%s\n' "$out" >>"$LOG"; echo "bench-sort-duckdb: DuckDB at $mem crashed; see $LOG" >&2; exit 1; }
	printf '== %s duckdb %s\n%s\n' "$mem" "$round" "$out" >>"$LOG"
	if line=$(printf '%s\n' "$out" | grep '^RESULT '); then
		local secs=${line#*secs=} vm=${line#*vmhwm_kb=} base=${line#*base_kb=} wr=${line#*written=} answer
		secs=${secs%% *}; vm=${vm%% *}; base=${base%% *}
		answer=$(printf '%s\n' "$out" | sed -n 's/^ANSWER //p')
		echo "$mem,duckdb,$round,$secs,$vm,$base,$wr,$answer" >>"$CSV"
	else
		echo "bench-sort-duckdb: DuckDB at $mem: $(printf '%s\n' "$out" | sed -n 's/^FAILED //p' | sed -n 1p)" | tee -a "$LOG"
		echo "$mem,duckdb,$round,failed,,,,failed" >>"$CSV"
	fi
}

plan=$(psql_ -c "SET work_mem = '16MB'" -c "SET max_parallel_workers_per_gather = 0" \
	-c "EXPLAIN (COSTS OFF) CREATE TABLE s AS SELECT * FROM t ORDER BY a")
grep -q XxlSort <<<"$plan" || { echo "bench-sort-duckdb: the CTAS plan has no XxlSort: $plan" >&2; exit 1; }

for mem in $MEMS; do
	echo "bench-sort-duckdb: $mem"
	for ((round = 1; round <= ROUNDS; round++)); do
		duck_sort "$mem" "$round"
		pg "$mem" ctas "$round"
		pg "$mem" sort_into "$round"
	done
done
psql_ -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS s"

# --- checks: every target holds t's rows, in order ---------------------------------

while IFS=, read -r mem tool round secs vm base wr answer; do
	[ "$answer" = failed ] && continue
	[ "$answer" = "$expect 0" ] ||
		{ echo "bench-sort-duckdb: $tool at $mem (round $round) gave '$answer', expected '$expect 0'" >&2; exit 1; }
done < <(tail -n +2 "$CSV")
echo "bench-sort-duckdb: checks ok (count, sum and order of every target)"

# --- report --------------------------------------------------------------------------

median() { sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
pick() { awk -F, -v m="$1" -v t="$2" -v c="$3" '$1 == m && $2 == t && $4 != "failed" {print $c}' "$CSV" | median; }
printf '\n%s rows of (bigint, bigint) into a new table, %s threads\n' "$ROWS" "$THREADS"
printf '%-6s %-10s %8s %8s %10s %10s\n' budget tool secs /DuckDB "peak MB" "written MB"
: >"$DAT"
for mem in $MEMS; do
	d=$(pick "$mem" duckdb 4)
	for tool in duckdb ctas sort_into; do
		s=$(pick "$mem" "$tool" 4)
		vm=$(pick "$mem" "$tool" 5)
		wr=$(pick "$mem" "$tool" 7)
		if [ -z "$s" ]; then
			printf '%-6s %-10s %8s\n' "$mem" "$tool" failed
			continue
		fi
		ratio=$([ -n "$d" ] && echo "$s / $d" | bc -l || echo)
		printf '%-6s %-10s %8.2f %8s %10.0f %10.0f\n' "$mem" "$tool" "$s" "${ratio:+$(printf '%.2f' "$ratio")}" \
			"$(echo "$vm / 1024" | bc -l)" "$(echo "$wr / 1048576" | bc -l)"
	done
	base=$(pick "$mem" duckdb 6)
	[ -n "$base" ] && printf '%-6s (DuckDB held %.0f MB before the statement)\n' "$mem" "$(echo "$base / 1024" | bc -l)"
	printf '"%s" %s %s %s\n' "$mem" "${d:-0}" "$(pick "$mem" ctas 4)" "$(pick "$mem" sort_into 4)" >>"$DAT"
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'; rows='$ROWS'; threads='$THREADS'" bench/plot_sort_duckdb.gp >>"$LOG" 2>&1 &&
		echo "bench-sort-duckdb: chart $PNG"
fi
echo "bench-sort-duckdb: $CSV, $LOG"
