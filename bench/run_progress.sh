#!/usr/bin/env bash
# run_progress.sh — what the progress view costs a long sort: the same
# xxl.sort_into of ROWS (50M) rows of (a bigint random, b bigint) at
# xxl.memory = MEM (64MB), with publishing off (track_activities = off,
# which stops xxl.progress as it stops pg_stat_activity), on, and on while
# a second session reads xxl.progress every SAMPLE_MS (100 ms, psql's
# \watch in one connection), alternated ROUNDS (5) times on one preloaded
# throwaway server.  Prints each configuration's median time, the ratios
# to off, the spread of the runs with it off (the noise the ratios must be
# compared with), the reader's rows and the phases it saw; every run's
# answer must be ROWS.
#
# Files: bench/out/progress.csv (one line per run), progress.log, and
# progress.png (every run's time by round, both configurations).
# Environment: ROWS, MEM, ROUNDS, SAMPLE_MS, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${ROWS:-50000000}
MEM=${MEM:-64MB}
case $MEM in *[0-9]) MEM=${MEM}MB ;; esac
ROUNDS=${ROUNDS:-5}
SAMPLE_MS=${SAMPLE_MS:-100}
OUT=$REPO/bench/out
mkdir -p "$OUT"
CSV=$OUT/progress.csv
LOG=$OUT/progress.log

build_and_install
start_bench_server progress "shared_preload_libraries = 'pgxxl'
max_parallel_workers_per_gather = 0"

q() { as_pg "$PGBIN/psql" -XAtq -v ON_ERROR_STOP=1 -d postgres "$@"; }

echo "loading $ROWS rows" | tee "$LOG"
q -c "CREATE EXTENSION pgxxl" -c "
CREATE UNLOGGED TABLE t AS
SELECT (hashint8(g)::bigint << 20) # g AS a, g AS b FROM generate_series(1, $ROWS) g" \
	-c "VACUUM ANALYZE t"
restart_server

# one sort in a fresh connection, timed by the server's clock: "secs rows"
sort_once() {
	local track=$1
	q <<SQL
SET client_min_messages = warning;
SET track_activities = $track;
SET xxl.memory = '$MEM';
DROP TABLE IF EXISTS s;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT xxl.sort_into('t', 'a', 's') AS n \gset
SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3) || ' ' || :n;
SQL
}

# read the view in one session (psql's \watch) until the sort's session
# ends: "rows seen|phases seen"
sample() {
	local until_pid=$1 secs
	secs=$(awk -v ms="$SAMPLE_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
	printf "SELECT phase FROM xxl.progress WHERE operator = 'sort_into' \\watch %s\n" "$secs" |
		PGAPPNAME=progress_watch as_pg "$PGBIN/psql" -XAtq -d postgres >"$WORK/watch.out" 2>/dev/null &
	local watcher=$!
	while kill -0 "$until_pid" 2>/dev/null; do sleep 0.05; done
	# \watch runs until its connection goes (a signal to runuser does not reach psql)
	q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'progress_watch'" >/dev/null
	wait "$watcher" 2>/dev/null || true
	echo "$(grep -c . "$WORK/watch.out" || true)|$(sed -E 's/ [0-9]+( of [0-9]+)?$//' "$WORK/watch.out" |
		sort -u | sed '/^$/d' | paste -sd';' -)"
}

# configurations: off (track_activities = off: nothing published), on
# (published, nobody reads), read (published, a session reads the view
# every SAMPLE_MS)
echo "round,config,secs,rows,samples,phases" >"$CSV"
for round in $(seq 1 "$ROUNDS"); do
	for config in off on read; do
		if [ $config = read ]; then
			sort_once on >"$WORK/sort.out" &
			pid=$!
			seen=$(sample $pid)
			wait $pid
		else
			sort_once $config >"$WORK/sort.out"
			seen="0|"
		fi
		read -r secs rows <"$WORK/sort.out"
		if [ "$rows" != "$ROWS" ]; then
			echo "round $round, $config: sort_into returned $rows rows, not $ROWS" | tee -a "$LOG" >&2
			exit 1
		fi
		echo "$round,$config,$secs,$rows,${seen%%|*},\"${seen#*|}\"" >>"$CSV"
		printf 'round %d  %-4s  %8.3f s  samples %s\n' "$round" $config "$secs" "${seen%%|*}" | tee -a "$LOG"
	done
done

python3 - "$CSV" <<'PY' | tee -a "$LOG"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {c: [float(r['secs']) for r in rows if r['config'] == c] for c in ('off', 'on', 'read')}
med = {c: statistics.median(v) for c, v in t.items()}
phases = sorted({p for r in rows if r['config'] == 'read' for p in r['phases'].split(';') if p})
samples = [int(r['samples']) for r in rows if r['config'] == 'read']
print(f"\nsort_into of {len(rows) and rows[0]['rows']} rows, {len(t['off'])} rounds")
print(f"{'':24}{'median':>10}{'min':>10}{'max':>10}")
for c, name in (('off', 'publishing off'), ('on', 'on, nobody reads'), ('read', 'on, view read')):
    print(f"{name:24}{med[c]:10.3f}{min(t[c]):10.3f}{max(t[c]):10.3f}")
print(f"ratio on/off (medians) = {med['on'] / med['off']:.3f}")
print(f"ratio read/off (medians) = {med['read'] / med['off']:.3f}")
print(f"noise: off runs' max/min = {max(t['off']) / min(t['off']):.3f}")
print(f"samples per run with rows: {min(samples)}-{max(samples)}; phases seen: {', '.join(phases)}")
PY

awk -F, 'NR > 1 { v[$1, $2] = $3; n = $1 } END { for (i = 1; i <= n; i++) print i, v[i, "off"], v[i, "on"], v[i, "read"] }' \
	"$CSV" >"$OUT/progress.dat"
gnuplot <<GP
set terminal pngcairo size 800,480
set output '$OUT/progress.png'
set title "xxl.sort_into of $ROWS rows at $MEM: progress publishing off and on (view read every $SAMPLE_MS ms)"
set xlabel 'round'
set ylabel 'seconds'
set yrange [0:*]
set style data histograms
set style fill solid 0.8
set boxwidth 0.8
plot '$OUT/progress.dat' using 2:xtic(1) title 'off', '' using 3 title 'on', '' using 4 title 'on, view read'
GP
echo "wrote $CSV, $LOG, $OUT/progress.png"
