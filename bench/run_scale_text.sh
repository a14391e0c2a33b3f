#!/usr/bin/env bash
# run_scale_text.sh — the suffix array of one text at budgets from what
# holds it in memory down to 1MB, in one run on one server: the text part
# of `make bench-scale` (issue 46: every point completes, the cost grows
# smoothly below "fits", I/O a small multiple of the text per level).
#
# Text: SUFFIX_MB (100) MiB of the text files of /usr/share/doc and
# /usr/include (bench/run_suffix.sh's), as 1 MiB bytea rows.  At each budget
# of MEMS, in a fresh connection, xxl.suffix_array_into writes the suffix
# array to a table; its row count must be the text's length at every budget,
# and the smallest budget's array must pass xxl.suffix_array_check.
# From xxl.last_stats(): time, peak memory, bytes read and written, levels.
#
# Output: a table (time, against the first budget's, MB written, written /
# text bytes, levels, peak) and bench/out/scale_text.{csv,png,log}.
#
# Environment: SUFFIX_MB, MEMS ("1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB"),
# KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

SUFFIX_MB=${SUFFIX_MB:-100}
MEMS=${MEMS:-1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB}
OUT=bench/out
TEXT=$OUT/suffix_text.bin
CSV=$OUT/scale_text.csv
LOG=$OUT/scale_text.log
PNG=$OUT/scale_text.png
mkdir -p "$OUT"
: >"$LOG"
N=$((SUFFIX_MB * 1048576))

echo "bench-scale (text): build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-scale: build failed, see $LOG" >&2; exit 1; }
echo "bench-scale (text): collecting $SUFFIX_MB MiB of text from /usr/share/doc and /usr/include"
have=$(collect_text "$TEXT" "$N")
if [ "$have" -lt "$N" ]; then
	echo "bench-scale (text): only $have bytes of text found; using that" >&2
	N=$have
fi
start_bench_server bench-scale-text "shared_buffers = 16MB"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
load_text_corpus corpus "$TEXT" "$N" >>"$LOG" 2>&1 || { echo "bench-scale: loading the text failed; see $LOG" >&2; exit 1; }
CORPUS="SELECT chunk FROM corpus ORDER BY id"
echo "bench-scale (text): $(nproc) cores, load:$(uptime | sed 's/.*load average//'); n = $N bytes"

echo "mem,mb,ms,peak,read,written,levels,rows" >"$CSV"
last=
for mem in $MEMS; do
	out=$(psql_ 2>&1 <<SQL
DROP TABLE IF EXISTS sa;
SET xxl.memory = '$mem';
SELECT xxl.suffix_array_into('$CORPUS', 'sa');
SELECT concat_ws(',', round(total_ms), memory_peak, (SELECT sum(b) FROM unnest(bytes_read) b),
	(SELECT sum(b) FROM unnest(bytes_written) b), coalesce(details->>'levels', ''),
	(SELECT count(*) FROM sa)) FROM xxl.last_stats();
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-scale: the suffix array at $mem failed; see $LOG" >&2; exit 1; }
	printf '== %s\n%s\n' "$mem" "$out" >>"$LOG"
	stats=$(printf '%s\n' "$out" | tail -1)
	mb=$(echo "$mem" | sed 's/GB/*1024/; s/MB//' | bc)
	echo "$mem,$mb,$stats" >>"$CSV"
	rows=${stats##*,}
	[ "$rows" = "$N" ] || { echo "bench-scale: $rows suffixes at $mem, not $N" >&2; exit 1; }
	last=$mem
done
echo "bench-scale (text): xxl.suffix_array_check of the $last array"
ok=$(psql_ -c "SET xxl.memory = '16MB'" -c "SELECT xxl.suffix_array_check('$CORPUS', 'sa')" | tail -1)
[ "$ok" = t ] || { echo "bench-scale: the checker rejected the $last suffix array ($ok)" >&2; exit 1; }

printf '\nsuffix array of %s bytes of text; time against the first budget\n' "$N"
printf '%-6s %9s %8s %10s %9s %6s %8s\n' budget "s" "/first" "MB written" "wr/bytes" levels "peak kB"
awk -F, -v n="$N" 'NR > 1 {
	if (first == "") first = $3;
	printf "%-6s %9.2f %8.2f %10.0f %9.1f %6s %8.0f\n", $1, $3 / 1000, $3 / first, $6 / 1048576,
		$6 / n, $7, $4 / 1024 }' "$CSV"

if command -v gnuplot >/dev/null; then
	gnuplot -e "csv='$CSV'; png='$PNG'; title='suffix array of $N bytes of text'" \
		bench/plot_scale_text.gp >>"$LOG" 2>&1 && echo "bench-scale (text): chart $PNG"
fi
echo "bench-scale (text): $CSV, $LOG"
