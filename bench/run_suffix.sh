#!/usr/bin/env bash
# run_suffix.sh — drives the suffix-array benchmark: xxl.suffix_array_into
# against libdivsufsort in RAM and against a PL/pgSQL prefix-doubling
# implementation ("pure SQL"), in one run, on the same bytes.
#
# The text: SUFFIX_MB MiB (default 100) of real text found on the machine,
# the text files (grep -I) of /usr/share/doc and /usr/include, in path
# order, concatenated and cut (bench/out/suffix_text.bin).  In the database
# it is a table of 1 MiB bytea rows (STORAGE EXTERNAL: read slice by slice,
# no decompression), read as 'SELECT chunk FROM suffix_corpus ORDER BY id'.
#
# Measured, each in a fresh connection (time = server clock around the
# statement; peak memory = VmHWM of the backend right after it, and its
# RssShmem, the shared buffers it touched, which VmHWM includes; the server
# has shared_buffers = 16MB so that they add little):
#   divsufsort        libdivsufsort 2.0 (32-bit indexes: 5n bytes) in RAM,
#                     timed without reading the file; divsufsort64 (9n) too
#   xxl n/8           xxl.suffix_array_into with xxl.memory = n/8 (SUFFIX_MEM)
#   xxl roomy         the same with xxl.memory = SUFFIX_ROOMY (1GB: in memory)
#   xxl check         xxl.suffix_array_check of the n/8 result at n/8
#   engine n/8        the engine alone on the file (bench/bench_suffix.c, no
#                     PostgreSQL), when SUFFIX_ENGINE=1 (default)
#   doubling 1MB/4MB  bench/suffix_doubling.sql on the first 1 MiB and 4 MiB
#                     (work_mem 256MB; 4 MiB only if 1 MiB took under
#                     DBL_LIMIT/5 s, and cut off at DBL_LIMIT = 300 s), with
#                     xxl and divsufsort on the same prefixes
# The server runs with wal_level = minimal, so the new tables skip WAL, and
# shared_buffers = 16MB (reading the corpus and writing the suffix array go
# through rings of buffers anyway).
#
# Output: a table (s, µs/byte, ratio to divsufsort, peak memory, I/O bytes
# and per byte, recursion depth, I/O against [T]'s sort(30n) + scan(6n)),
# bench/out/suffix.{csv,log,dat,png}, and as the last line
#   ratio xxl/divsufsort = T.TT (time), M.MMM (peak memory; M.MMM without shared buffers)
#   ratio xxl/divsufsort64 = ... (the same against the 64-bit build)
#
# Environment: SUFFIX_MB (100), SUFFIX_MEM (n/8, e.g. 16MB), SUFFIX_ROOMY
# (1GB), SUFFIX_ENGINE (1), DBL_MB ("1 4"), DBL_LIMIT (300), BB
# (build/bench), KEEP_CLUSTER=1 (leave the server behind).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

SUFFIX_MB=${SUFFIX_MB:-100}
SUFFIX_ROOMY=${SUFFIX_ROOMY:-1GB}
SUFFIX_ENGINE=${SUFFIX_ENGINE:-1}
DBL_MB=${DBL_MB:-1 4}
DBL_LIMIT=${DBL_LIMIT:-300}
BB=${BB:-build/bench}
OUT=bench/out
TEXT=$OUT/suffix_text.bin
CSV=$OUT/suffix.csv
DAT=$OUT/suffix.dat
LOG=$OUT/suffix.log
PNG=$OUT/suffix.png
mkdir -p "$OUT"
: >"$LOG"

N=$((SUFFIX_MB * 1048576))
SUFFIX_MEM=${SUFFIX_MEM:-$((N / 8 / 1048576))MB}

# --- what the comparison needs ------------------------------------------------

echo "bench-suffix: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-suffix: build failed, see $LOG" >&2; exit 1; }
install_missing bench-suffix libdivsufsort-dev gnuplot-nox gcc
mkdir -p "$BB"
BENCH_OPT=${BENCH_OPT:--O3}
gcc -std=gnu11 $BENCH_OPT -Wall -Isrc -o "$BB/suffix_divsufsort" bench/suffix_divsufsort.c \
	-ldivsufsort -ldivsufsort64 >>"$LOG" 2>&1
if [ "$SUFFIX_ENGINE" = 1 ]; then
	gcc -std=gnu11 $BENCH_OPT -fopenmp -pthread -Isrc -o "$BB/bench_suffix" \
		bench/bench_suffix.c src/core/*.c src/core/text/*.c -lm >>"$LOG" 2>&1
fi

# --- the text -------------------------------------------------------------------

echo "bench-suffix: collecting $SUFFIX_MB MiB of text from /usr/share/doc and /usr/include"
have=$(collect_text "$TEXT" "$N")
if [ "$have" -lt "$N" ]; then
	echo "bench-suffix: only $have bytes of text found; using that" >&2
	N=$have
fi

# --- a throwaway server ------------------------------------------------------------

# small shared buffers, so that the backends' VmHWM is mostly their own memory
start_bench_server bench-suffix "shared_buffers = 16MB"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
psql_ -f bench/suffix_doubling.sql >>"$LOG" 2>&1
echo "bench-suffix: $(psql_ -c 'SELECT xxl.version()'), $(nproc) cores; n = $N bytes; xxl.memory = $SUFFIX_MEM (n/8) and $SUFFIX_ROOMY"

# the corpus: 1 MiB rows, stored out of line without compression
load_text_corpus suffix_corpus "$TEXT" "$N" >>"$LOG" 2>&1 || { echo "bench-suffix: loading the corpus failed; see $LOG" >&2; exit 1; }

# --- measuring ----------------------------------------------------------------------

echo "name,n,memory,secs,us_per_byte,vmhwm_kb,rss_shmem_kb,budget_peak,io_bytes,io_per_byte,levels,recursion_depth,external_levels,io_vs_thesis,input_ms,merge_ms,output_ms,extra" >"$CSV"

# measure NAME N MEMORY STATEMENT [SETUP]
# A fresh connection: the statement, the server-side time around it, the
# backend's VmHWM and RssShmem right after it, and xxl.last_stats().
measure() {
	local name=$1 n=$2 mem=$3 stmt=$4 setup=${5:-} out rc=0 line
	echo "== $name: $stmt" >>"$LOG"
	out=$(psql_ 2>&1 <<SQL
SET xxl.memory = '$mem';
$setup
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s vmhwm_kb=%s shmem_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1],
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1]);
SELECT format('STATS operator=%s peak=%s io=%s levels=%s depth=%s ext=%s thesis=%s input_ms=%s merge_ms=%s output_ms=%s verdict=%s',
	operator, memory_peak,
	(SELECT sum(x) FROM unnest(bytes_read || bytes_written) x),
	coalesce(details->>'levels', ''), coalesce(details->>'recursion_depth', ''),
	coalesce(details->>'external_levels', ''), coalesce(details->>'io_vs_thesis', ''),
	round(input_ms::numeric), round(merge_ms::numeric), round(output_ms::numeric),
	coalesce(details->>'verdict', ''))
FROM xxl.last_stats();
SQL
) || rc=$?
	printf '%s\n' "$out" >>"$LOG"
	line=$(printf '%s\n' "$out" | grep '^RESULT ' || true)
	if [ $rc -ne 0 ] || [ -z "$line" ]; then
		echo "bench-suffix: $name failed; see $LOG" >&2
		printf '%s\n' "$out" | tail -n 5 >&2
		return 1
	fi
	local secs vm shm st peak= io= levels= depth= ext= thesis= ims= mms= oms= verdict=
	secs=$(sed -E 's/.*secs=([0-9.]+).*/\1/' <<<"$line")
	vm=$(sed -E 's/.*vmhwm_kb=([0-9]+).*/\1/' <<<"$line")
	shm=$(sed -E 's/.*shmem_kb=([0-9]+).*/\1/' <<<"$line")
	st=$(printf '%s\n' "$out" | grep '^STATS ' || true)
	if [ -n "$st" ]; then
		peak=$(sed -E 's/.* peak=([0-9]*).*/\1/' <<<"$st")
		io=$(sed -E 's/.* io=([0-9]*).*/\1/' <<<"$st")
		levels=$(sed -E 's/.* levels=([0-9]*).*/\1/' <<<"$st")
		depth=$(sed -E 's/.* depth=([0-9]*).*/\1/' <<<"$st")
		ext=$(sed -E 's/.* ext=([0-9]*).*/\1/' <<<"$st")
		thesis=$(sed -E 's/.* thesis=([0-9.]*).*/\1/' <<<"$st")
		ims=$(sed -E 's/.* input_ms=([0-9]*).*/\1/' <<<"$st")
		mms=$(sed -E 's/.* merge_ms=([0-9]*).*/\1/' <<<"$st")
		oms=$(sed -E 's/.* output_ms=([0-9]*).*/\1/' <<<"$st")
		verdict=$(sed -E 's/.* verdict=(.*)$/\1/' <<<"$st")
	fi
	local upb iopb
	upb=$(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.4f", s * 1e6 / n }')
	iopb=$([ -n "$io" ] && awk -v io="$io" -v n="$n" 'BEGIN { printf "%.1f", io / n }' || true)
	echo "$name,$n,$mem,$secs,$upb,$vm,$shm,$peak,$io,$iopb,$levels,$depth,$ext,$thesis,$ims,$mms,$oms,$verdict" >>"$CSV"
}

# divsuf NAME LEN BITS
divsuf() {
	local name=$1 len=$2 bits=$3 out line
	echo "== $name: $BB/suffix_divsufsort $TEXT $len $bits" >>"$LOG"
	out=$("$BB/suffix_divsufsort" "$TEXT" "$len" "$bits" 2>&1) || { echo "bench-suffix: $name failed: $out" >&2; return 1; }
	printf '%s\n' "$out" >>"$LOG"
	line=$(grep '^RESULT ' <<<"$out")
	local secs upb rss
	secs=$(sed -E 's/.*secs=([0-9.]+).*/\1/' <<<"$line")
	upb=$(sed -E 's/.*us_per_byte=([0-9.]+).*/\1/' <<<"$line")
	rss=$(sed -E 's/.*maxrss_kb=([0-9]+).*/\1/' <<<"$line")
	echo "$name,$len,-,$secs,$upb,$rss,0,,,,,,,,,,,ok" >>"$CSV"
}

CORPUS="SELECT chunk FROM suffix_corpus ORDER BY id"

echo "bench-suffix: divsufsort on $N bytes"
divsuf "divsufsort" "$N" 32
divsuf "divsufsort64" "$N" 64

echo "bench-suffix: xxl.suffix_array_into, xxl.memory = $SUFFIX_MEM"
measure "xxl n/8" "$N" "$SUFFIX_MEM" "SELECT xxl.suffix_array_into('$CORPUS', 'sa_small')"
echo "bench-suffix: xxl.suffix_array_check of it, xxl.memory = $SUFFIX_MEM"
measure "xxl check" "$N" "$SUFFIX_MEM" "SELECT xxl.suffix_array_check('$CORPUS', 'sa_small')"
verdict=$(awk -F, '$1 == "xxl check" { print $18 }' "$CSV")
if [ "$verdict" != "true" ]; then
	echo "bench-suffix: the checker rejected the suffix array ($verdict)" >&2
	exit 1
fi
psql_ -c "DROP TABLE sa_small" >>"$LOG" 2>&1
echo "bench-suffix: xxl.suffix_array_into, xxl.memory = $SUFFIX_ROOMY"
measure "xxl roomy" "$N" "$SUFFIX_ROOMY" "SELECT xxl.suffix_array_into('$CORPUS', 'sa_roomy')"
psql_ -c "DROP TABLE sa_roomy" >>"$LOG" 2>&1

if [ "$SUFFIX_ENGINE" = 1 ]; then
	echo "bench-suffix: the engine alone (no PostgreSQL), same budget"
	mem_mb=$(sed -E 's/MB$//' <<<"$SUFFIX_MEM")
	spill=$WORK/engine-spill
	mkdir -p "$spill"
	echo "== engine n/8: $BB/bench_suffix $TEXT $mem_mb $spill" >>"$LOG"
	eout=$("$BB/bench_suffix" "$TEXT" "$mem_mb" "$spill" 2>&1) || true
	printf '%s\n' "$eout" >>"$LOG"
	esecs=$(sed -nE 's/^DC3: ([0-9.]+) s .*/\1/p' <<<"$eout")
	if [ -n "$esecs" ]; then
		eio=$(sed -nE 's/^  I\/O: read ([0-9.]+) MB \+ written ([0-9.]+) MB.*/\1 \2/p' <<<"$eout" |
			awk '{ printf "%.0f", ($1 + $2) * 1048576 }')
		erss=$(sed -nE 's/.*process max RSS ([0-9.]+) MB.*/\1/p' <<<"$eout" | awk '{ printf "%.0f", $1 * 1024 }')
		elevels=$(sed -nE 's/.*us\/byte, ([0-9]+) levels \(([0-9]+) external\).*/\1 \2/p' <<<"$eout")
		ethesis=$(sed -nE 's/.*measured\/formula = ([0-9.]+).*/\1/p' <<<"$eout")
		echo "engine n/8,$N,$SUFFIX_MEM,$esecs,$(awk -v s="$esecs" -v n="$N" 'BEGIN { printf "%.4f", s * 1e6 / n }'),$erss,0,,$eio,$(awk -v io="$eio" -v n="$N" 'BEGIN { printf "%.1f", io / n }'),${elevels% *},$(( ${elevels% *} - 1 )),${elevels#* },$ethesis,,,,text+SA arrays in RSS" >>"$CSV"
	else
		echo "bench-suffix: the engine run failed; see $LOG" >&2
	fi
	rm -rf "$spill"
fi

# the pure SQL baseline, with xxl and divsufsort on the same prefixes
dbl_done=
for mb in $DBL_MB; do
	len=$((mb * 1048576))
	[ "$len" -le "$N" ] || continue
	if [ -n "$dbl_done" ] && [ "$(awk -v s="$dbl_done" -v l="$DBL_LIMIT" 'BEGIN { print (s * 5 > l) }')" = 1 ]; then
		echo "bench-suffix: skipping doubling on $mb MiB (${dbl_done} s on the previous size)"
		continue
	fi
	psql_ -c "DROP TABLE IF EXISTS dbl_src; CREATE TABLE dbl_src AS SELECT pg_read_binary_file('$WORK/text.bin', 0, $len) AS b" >>"$LOG" 2>&1
	echo "bench-suffix: PL/pgSQL doubling on $mb MiB (limit $DBL_LIMIT s)"
	if measure "doubling ${mb}MB" "$len" "64MB" \
		"SELECT bench_doubling_sa((SELECT b FROM dbl_src), 'sa_dbl')" \
		"SET work_mem = '256MB'; SET temp_buffers = '256MB'; SET statement_timeout = '${DBL_LIMIT}s';"; then
		dbl_done=$(awk -F, -v n="doubling ${mb}MB" '$1 == n { print $4 }' "$CSV")
		ok=$(psql_ -c "SELECT xxl.suffix_array_check('dbl_src', 'sa_dbl')")
		[ "$ok" = t ] || { echo "bench-suffix: doubling gave a wrong suffix array" >&2; exit 1; }
	else
		echo "doubling ${mb}MB,$len,-,>$DBL_LIMIT,,,,,,,,,,,,,,timeout" >>"$CSV"
		dbl_done=$DBL_LIMIT
	fi
	psql_ -c "DROP TABLE IF EXISTS sa_dbl" >>"$LOG" 2>&1
	measure "xxl ${mb}MB" "$len" "${mb}MB" "SELECT xxl.suffix_array_into('dbl_src', 'sa_x')"
	psql_ -c "DROP TABLE IF EXISTS sa_x" >>"$LOG" 2>&1
	divsuf "divsufsort ${mb}MB" "$len" 32
done

# --- report ------------------------------------------------------------------------

echo
awk -F, -v n="$N" '
	NR == 1 { next }
	{ row[NR] = $0; name[NR] = $1; secs[$1] = $4 }
	END {
		printf "%-16s %10s %9s %10s %9s %9s %9s %9s %8s %6s %8s\n", "run", "bytes", "memory", "s", "us/byte",
			"x divsuf", "peak MB", "own MB", "I/O B/B", "depth", "I/O/[T]"
		for (i = 2; i <= NR; i++) {
			split(row[i], f, ",")
			ref = f[2] == n ? secs["divsufsort"] : secs["divsufsort " f[2] / 1048576 "MB"]
			ratio = (ref > 0 && f[4] + 0 > 0) ? sprintf("%.2f", f[4] / ref) : "-"
			printf "%-16s %10s %9s %10s %9s %9s %9.1f %9.1f %8s %6s %8s\n", f[1], f[2], f[3], f[4], f[5], ratio,
				f[6] / 1024, (f[6] - f[7]) / 1024, f[10] == "" ? "-" : f[10], f[12] == "" ? "-" : f[12],
				f[14] == "" ? "-" : f[14]
		}
	}' "$CSV"
echo
echo "peak MB: VmHWM of the backend (the engine run: process max RSS, text and arrays included;"
echo "divsufsort: max RSS, text and suffix array included); own MB: VmHWM less the shared"
echo "buffers the backend touched (RssShmem at the end)."
echo "I/O/[T]: spill bytes read + written over [T] Thm 13's sort(30n) + scan(6n) with 4-byte words"
echo "(66 x 4 n bytes); the checker's row: over sort(5n) + scan(2n) (12 x 4 n)."

# chart: time per byte and peak memory per run
awk -F, 'NR > 1 { gsub(/ /, "_", $1); printf "%s %s %.1f\n", $1, ($5 == "" ? 0 : $5), $6 / 1024 }' "$CSV" >"$DAT"
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'; n_mb='$((N / 1048576))'; mem='$SUFFIX_MEM'" bench/plot_suffix.gp >>"$LOG" 2>&1 ||
		echo "bench-suffix: gnuplot failed; see $LOG" >&2
fi
echo "files: $CSV $DAT $PNG $LOG"

# against both builds of the library: 32-bit indexes (5n bytes), and 64-bit
# ones (9n), the like-for-like peer of bigint positions and the build whose
# peak (9n) the issue's reference figure shows
awk -F, '
	$1 == "divsufsort" { ds = $4; dm = $6 }
	$1 == "divsufsort64" { d6s = $4; d6m = $6 }
	$1 == "xxl n/8" { xs = $4; xm = $6; xo = $6 - $7 }
	END {
		if (ds > 0 && dm > 0) printf "ratio xxl/divsufsort = %.2f (time), %.3f (peak memory; %.3f without shared buffers)\n", xs / ds, xm / dm, xo / dm
		if (d6s > 0 && d6m > 0) printf "ratio xxl/divsufsort64 = %.2f (time), %.3f (peak memory; %.3f without shared buffers)\n", xs / d6s, xm / d6m, xo / d6m
	}' "$CSV"
