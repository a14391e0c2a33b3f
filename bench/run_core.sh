#!/usr/bin/env bash
# run_core.sh — drives the core-sorter benchmark: runs the pgxxl and STXXL
# programs (built by bench/bench.mk) on the same records, budget, block size
# and spill directory, prints them side by side, writes
# bench/out/core_sort.{csv,log,dat,png} and prints, as its very last line,
# `ratio pgxxl/stxxl = X.XX` (total time, pgxxl over STXXL).
#
# Environment: N (records, default 50000000), MEM (MiB, default 64),
# REPEAT (runs of each, default 1; medians are reported), BENCH_DIR (spill
# directory, default bench/out/spill), SEED (default 42), BB (where the
# programs are, default build/bench).  The order of the two programs
# alternates between repeats so neither always runs on a warmer machine.
set -euo pipefail

N=${N:-50000000}
MEM=${MEM:-64}
REPEAT=${REPEAT:-1}
SEED=${SEED:-42}
BB=${BB:-build/bench}
OUT=bench/out
SPILL=${BENCH_DIR:-$OUT/spill}
export SEED

mkdir -p "$OUT" "$SPILL"
LOG=$OUT/core_sort.log
RESULTS=$OUT/core_sort.results
CSV=$OUT/core_sort.csv
DAT=$OUT/core_sort.dat
PNG=$OUT/core_sort.png
# STXXL's logger would otherwise drop stxxl.log/stxxl.errlog into the spill dir.
export STXXLLOGFILE=$OUT/stxxl.log STXXLERRLOGFILE=$OUT/stxxl.errlog
: >"$LOG"
: >"$RESULTS"

BLOCK_KB=$("$BB/core_sort_bench" --block-kb "$MEM")

# Both sorters spill the whole input at least once; STXXL's file is sized
# 2.5x the data up front (sparse) and either may do a second pass.
data_mib=$(( N * 16 / 1048576 ))
avail_mib=$(df -Pm "$SPILL" | awk 'NR == 2 { print $4 }')
if [ -n "$avail_mib" ] && [ "$avail_mib" -lt $(( data_mib * 5 / 2 )) ]; then
	echo "bench-core: warning: $SPILL has $avail_mib MiB free, the sorters may need $(( data_mib * 5 / 2 ))" >&2
fi

run_one() {					# impl rep
	local impl=$1 rep=$2 bin out rc
	case $impl in
		pgxxl) bin=$BB/core_sort_bench ;;
		stxxl) bin=$BB/stxxl_sort_bench ;;
	esac
	echo "== $impl, run $rep: $bin $N $MEM $SPILL $BLOCK_KB" >>"$LOG"
	rc=0
	out=$("$bin" "$N" "$MEM" "$SPILL" "$BLOCK_KB" 2>>"$LOG") || rc=$?
	printf '%s\n' "$out" >>"$LOG"
	printf '%s\n' "$out" | grep -E '^(pgxxl|stxxl): ' | sed 's/^/  /'
	if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^RESULT .* ok=1$'; then
		echo "bench-core: $impl failed (exit $rc); see $LOG" >&2
		tail -n 20 "$LOG" >&2
		exit 1
	fi
	printf '%s\n' "$out" | grep '^RESULT ' | sed "s/\$/ rep=$rep/" >>"$RESULTS"
}

echo "bench-core: N=$N records of 16 bytes, MEM=$MEM MiB, block $BLOCK_KB KiB, spill dir $SPILL, repeat $REPEAT"
for rep in $(seq 1 "$REPEAT"); do
	if [ $(( rep % 2 )) -eq 1 ]; then
		run_one pgxxl "$rep"; run_one stxxl "$rep"
	else
		run_one stxxl "$rep"; run_one pgxxl "$rep"
	fi
done

# RESULT lines are `key=value` pairs; every run becomes a CSV row, and the
# medians over the repeats become the report and the chart.
FIELDS="impl n mem_mib block_kb rep push_s sort_s consume_s total_s read_bytes write_bytes wait_read_s wait_write_s runs passes engine_peak_bytes vmhwm_kb direct ok"
awk -v fields="$FIELDS" '
	BEGIN { nf = split(fields, f, " "); for (i = 1; i <= nf; i++) printf "%s%s", f[i], (i < nf ? "," : "\n") }
	{
		delete kv
		for (i = 2; i <= NF; i++) { split($i, p, "="); kv[p[1]] = p[2] }
		for (i = 1; i <= nf; i++) printf "%s%s", kv[f[i]], (i < nf ? "," : "\n")
	}' "$RESULTS" >"$CSV"

# The report shows, for each implementation, the run with the median total
# time (a real run, so its phases add up).  The ratio is the median of the
# per-repeat ratios: runs next to each other share the machine's mood, so a
# ratio within one repeat is what to trust, not times across repeats.
# MEDIANS: impl then the 12 fields named below, then direct; RATIO: X.XX.
MEDIANS=$(awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		impl = $col["impl"]; k = ++cnt[impl]
		for (name in col) v[impl, name, k] = $col[name]
	}
	# Index of the run with the median total (the lower one of two middles).
	function median_run(impl,   n, i, j, t, idx) {
		n = cnt[impl]
		for (i = 1; i <= n; i++) idx[i] = i
		for (i = 2; i <= n; i++) {
			t = idx[i]
			for (j = i - 1; j >= 1 && v[impl, "total_s", idx[j]] + 0 > v[impl, "total_s", t] + 0; j--)
				idx[j + 1] = idx[j]
			idx[j + 1] = t
		}
		return idx[int((n + 1) / 2)]
	}
	END {
		split("push_s sort_s consume_s total_s read_bytes write_bytes wait_read_s wait_write_s runs passes engine_peak_bytes vmhwm_kb", names, " ")
		for (ii = 1; ii <= 2; ii++) {
			impl = ii == 1 ? "pgxxl" : "stxxl"
			k = median_run(impl)
			printf "%s", impl
			for (i = 1; i <= 12; i++) printf " %.6f", v[impl, names[i], k]
			printf " %s\n", v[impl, "direct", k]
		}
	}' "$CSV")
RATIO=$(awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ t[$col["impl"], $col["rep"]] = $col["total_s"]; if ($col["rep"] > nrep) nrep = $col["rep"] }
	END {
		for (r = 1; r <= nrep; r++) a[r] = t["pgxxl", r] / t["stxxl", r]
		for (i = 2; i <= nrep; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		printf "%.2f", nrep % 2 ? a[(nrep + 1) / 2] : (a[nrep / 2] + a[nrep / 2 + 1]) / 2
	}' "$CSV")
RATIOS=$(awk -F, 'NR > 1 { t[$1, $5] = $9; if ($5 > n) n = $5 } END { for (r = 1; r <= n; r++) printf "%s%.2f", (r > 1 ? " " : ""), t["pgxxl", r] / t["stxxl", r] }' "$CSV")

# Gnuplot data: times in s, volumes and memory in MiB, NaN where unknown.
printf '%s\n' "$MEDIANS" | awk '
	BEGIN { print "# impl push_s sort_s consume_s total_s read_mib write_mib vmhwm_mib engine_peak_mib" }
	{
		peak = $12 < 0 ? "NaN" : sprintf("%.1f", $12 / 1048576)
		printf "%s %.3f %.3f %.3f %.3f %.1f %.1f %.1f %s\n", $1, $2, $3, $4, $5, $6 / 1048576, $7 / 1048576, $13 / 1024, peak
	}' >"$DAT"


# The table.
printf '%s\n' "$MEDIANS" | awk -v n="$N" -v mem="$MEM" -v rep="$REPEAT" -v ratios="$RATIOS" '
	{ for (i = 1; i <= NF; i++) m[$1, i] = $i }
	function row(label, i, fmt, scale,   a, b) {
		a = m["pgxxl", i] / scale; b = m["stxxl", i] / scale
		# (parenthesised: a bare ">" in printf arguments is a redirection)
		printf "%-28s %12s %12s %10s\n", label, sprintf(fmt, a), sprintf(fmt, b), (b > 0 ? sprintf("%.2f", a / b) : "-")
	}
	function text(label, a, b) { printf "%-28s %12s %12s\n", label, a, b }
	END {
		data = n * 16 / 1048576
		printf "\n%-28s %12s %12s %10s\n", (rep > 1 ? "median run of " rep : "one run"), "pgxxl", "stxxl", "pgxxl/stxxl"
		row("push + run formation [s]", 2, "%.3f", 1)
		row("sort() [s]", 3, "%.3f", 1)
		row("consume / final merge [s]", 4, "%.3f", 1)
		row("total [s]", 5, "%.3f", 1)
		row("read [MiB]", 6, "%.1f", 1048576)
		row("written [MiB]", 7, "%.1f", 1048576)
		text("I/O volume / data size", sprintf("%.2fx", (m["pgxxl", 6] + m["pgxxl", 7]) / 1048576 / data),
			 sprintf("%.2fx", (m["stxxl", 6] + m["stxxl", 7]) / 1048576 / data))
		text("I/O wait, read + write [s]", sprintf("%.3f", m["pgxxl", 8] + m["pgxxl", 9]),
			 sprintf("%.3f", m["stxxl", 8] + m["stxxl", 9]))
		row("peak RSS, VmHWM [MiB]", 13, "%.1f", 1024)
		text("engine budget peak [MiB]", sprintf("%.1f", m["pgxxl", 12] / 1048576), "n/a")
		# STXXL does not count its passes; its read volume over the data
		# size is the number of merge passes over all of it.
		text("runs, merge passes", sprintf("%d, %d", m["pgxxl", 10], m["pgxxl", 11]),
			 sprintf("?, ~%.1f", m["stxxl", 6] / 1048576 / data))
		text("direct I/O", m["pgxxl", 14], m["stxxl", 14])
		printf "(data %.1f MiB, budget %d MiB; check ok on both sides)\n", data, mem
		if (rep > 1)
			printf "time ratio per repeat: %s (the median is the ratio below)\n", ratios
	}'

# The chart (skipped with a warning if gnuplot is missing).
if command -v gnuplot >/dev/null; then
	title=$(printf 'core sort: %s x 16-byte records, MEM %s MiB, block %s KiB -- ratio pgxxl/stxxl = %s' \
		"$N" "$MEM" "$BLOCK_KB" "$RATIO")
	if gnuplot -e "datafile='$DAT'; outfile='$PNG'; title_text='$title'; mem=$MEM" bench/plot_core.gp 2>>"$LOG"; then
		echo "chart: $PNG  csv: $CSV  log: $LOG"
	else
		echo "bench-core: warning: gnuplot failed, see $LOG" >&2
	fi
else
	echo "bench-core: warning: gnuplot not installed, no chart (csv: $CSV)" >&2
fi

echo "ratio pgxxl/stxxl = $RATIO"
