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
# LCP=1: the suffix array with its LCP values (lcp => true) instead, into
# bench/out/scale_text_lcp.*; the table adds the LCP part's seconds and
# the bytes it read and wrote a text byte, and the smallest budget's LCP
# values must equal the first budget's.
#
# Environment: SUFFIX_MB, MEMS ("1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB"),
# LCP, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

SUFFIX_MB=${SUFFIX_MB:-100}
MEMS=${MEMS:-1GB 256MB 64MB 16MB 8MB 4MB 2MB 1MB}
LCP=${LCP:-0}
OUT=bench/out
TEXT=$OUT/suffix_text.bin
NAME=scale_text
WITH_LCP=
WHAT="suffix array"
if [ "$LCP" = 1 ]; then
	NAME=scale_text_lcp
	WITH_LCP=", lcp => true"
	WHAT="suffix array with LCP values"
fi
CSV=$OUT/$NAME.csv
LOG=$OUT/$NAME.log
PNG=$OUT/$NAME.png
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

echo "mem,mb,ms,peak,read,written,levels,lcp_ms,lcp_io,rows" >"$CSV"
last=
first=
for mem in $MEMS; do
	out=$(psql_ 2>&1 <<SQL
DROP TABLE IF EXISTS sa;
SET xxl.memory = '$mem';
SELECT xxl.suffix_array_into('$CORPUS', 'sa'$WITH_LCP);
SELECT concat_ws(',', round(total_ms), memory_peak, (SELECT sum(b) FROM unnest(bytes_read) b),
	(SELECT sum(b) FROM unnest(bytes_written) b), coalesce(details->>'levels', ''),
	coalesce(details->>'lcp_ms', ''), coalesce(details->>'lcp_io_bytes', ''),
	(SELECT count(*) FROM sa)) FROM xxl.last_stats();
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-scale: the $WHAT at $mem failed; see $LOG" >&2; exit 1; }
	# with LCP values, the first budget's table stays, to compare the last one with
	if [ "$LCP" = 1 ] && [ -z "$first" ]; then
		psql_ -c "DROP TABLE IF EXISTS sa0" -c "ALTER TABLE sa RENAME TO sa0" >>"$LOG" 2>&1
	fi
	first=${first:-$mem}
	printf '== %s\n%s\n' "$mem" "$out" >>"$LOG"
	stats=$(printf '%s\n' "$out" | tail -1)
	mb=$(echo "$mem" | sed 's/GB/*1024/; s/MB//' | bc)
	echo "$mem,$mb,$stats" >>"$CSV"
	rows=${stats##*,}
	[ "$rows" = "$N" ] || { echo "bench-scale: $rows suffixes at $mem, not $N" >&2; exit 1; }
	last=$mem
done
if [ "$LCP" = 1 ] && [ "$last" != "$first" ]; then
	echo "bench-scale (text): the $last LCP values against the $first ones"
	diff=$(psql_ -c "SELECT count(*) FROM sa s FULL JOIN sa0 f USING (rank) WHERE row(s.*) IS DISTINCT FROM row(f.*)")
	[ "$diff" = 0 ] || { echo "bench-scale: $diff ranks differ between $last and $first" >&2; exit 1; }
fi
echo "bench-scale (text): xxl.suffix_array_check of the $last array"
ok=$(psql_ -c "SET xxl.memory = '16MB'" -c "SELECT xxl.suffix_array_check('$CORPUS', 'sa')" | tail -1)
[ "$ok" = t ] || { echo "bench-scale: the checker rejected the $last suffix array ($ok)" >&2; exit 1; }

printf '\n%s of %s bytes of text; time against the first budget\n' "$WHAT" "$N"
printf '%-6s %9s %8s %10s %9s %6s %8s %7s %8s\n' budget "s" "/first" "MB written" "wr/bytes" levels "peak kB" "lcp s" "lcp io/b"
awk -F, -v n="$N" 'NR > 1 {
	if (first == "") first = $3;
	printf "%-6s %9.2f %8.2f %10.0f %9.1f %6s %8.0f %7s %8s\n", $1, $3 / 1000, $3 / first, $6 / 1048576,
		$6 / n, $7, $4 / 1024, ($8 == "" ? "-" : sprintf("%.2f", $8 / 1000)),
		($9 == "" ? "-" : sprintf("%.1f", $9 / n)) }' "$CSV"

if command -v gnuplot >/dev/null; then
	gnuplot -e "csv='$CSV'; png='$PNG'; title='$WHAT of $N bytes of text'" \
		bench/plot_scale_text.gp >>"$LOG" 2>&1 && echo "bench-scale (text): chart $PNG"
fi
echo "bench-scale (text): $CSV, $LOG"
