#!/usr/bin/env bash
# run_text_lcp.sh — the text benchmark of suffix arrays, LCP arrays and
# repeats: three corpora of TEXT_MB MiB (default 100), each as one text
# (1 MiB bytea rows, STORAGE EXTERNAL), at xxl.memory = n/8, side by side
# in one run with their in-RAM peers on the same bytes:
#   code        the text files of /usr/include and /usr/share/perl, in path order
#   prose       man pages (roff source), then the text files and the compressed
#               changelogs of /usr/share/doc, in path order
#   repetitive  VERSIONS versions of the first 2 MiB of the code corpus, each
#               the previous one with every 97th line (a different one each
#               time) edited: a history of the same files
# Measured (time = server clock around the statement; peak = VmHWM of the
# backend, or max RSS of the peer process; disk peak = the largest the
# server's pgsql_tmp directory got, sampled every 50 ms):
#   divsufsort / divsufsort64   libdivsufsort in RAM (5n / 9n bytes)
#   divsufsort+kasai            libdivsufsort and Kasai's PLCP (9n bytes), the
#                               LCP peer (bench/text_lcp_baseline.c)
#   xxl sa                      xxl.suffix_array_into at n/8
#   xxl sa+lcp                  xxl.suffix_array_into(..., lcp => true) at n/8
# and on the prose corpus xxl.repeats_into(min_length = REPEATS_K) at n/8
# against divsufsort + Kasai + a scan in one C program (the in-RAM method of
# deduplicate-text-datasets), whose ranges and covered bytes must agree.
#
# Output: a table with the ratios, bench/out/text_lcp.{csv,log,dat,png},
# and last lines `ratio xxl/divsufsort64 CORPUS = ... (sa), ... (sa+lcp vs
# divsufsort+kasai)`.
#
# Environment: TEXT_MB (100), TEXT_MEM (n/8), VERSIONS (50), REPEATS_K (50),
# TEXT_KINDS ("code prose repetitive"), KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

TEXT_MB=${TEXT_MB:-100}
VERSIONS=${VERSIONS:-50}
REPEATS_K=${REPEATS_K:-50}
TEXT_KINDS=${TEXT_KINDS:-code prose repetitive}
BB=${BB:-build/bench}
OUT=bench/out
CSV=$OUT/text_lcp.csv
DAT=$OUT/text_lcp.dat
LOG=$OUT/text_lcp.log
PNG=$OUT/text_lcp.png
mkdir -p "$OUT" "$BB"
: >"$LOG"
N=$((TEXT_MB * 1048576))
TEXT_MEM=${TEXT_MEM:-$((N / 8 / 1024))kB}

echo "bench-text-lcp: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-text-lcp: build failed, see $LOG" >&2; exit 1; }
install_missing bench-text-lcp libdivsufsort-dev gnuplot-nox gcc
BENCH_OPT=${BENCH_OPT:--O3}
gcc -std=gnu11 $BENCH_OPT -Wall -Isrc -o "$BB/suffix_divsufsort" bench/suffix_divsufsort.c \
	-ldivsufsort -ldivsufsort64 >>"$LOG" 2>&1
gcc -std=gnu11 $BENCH_OPT -Wall -Isrc -o "$BB/text_lcp_baseline" bench/text_lcp_baseline.c -ldivsufsort >>"$LOG" 2>&1

# --- the corpora ------------------------------------------------------------------

text_files() { find "$@" -type f -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 grep -lIZ '' 2>/dev/null | xargs -0 cat 2>/dev/null; }

make_corpus() {
	local kind=$1 file=$OUT/text_$1.bin
	if [ -s "$file" ] && [ "$(stat -c %s "$file")" -eq "$N" ]; then
		return 0
	fi
	echo "bench-text-lcp: collecting the $kind corpus ($TEXT_MB MiB)"
	case $kind in
		code) text_files /usr/include /usr/share/perl | head -c "$N" >"$file" || true ;;
		prose)
			{
				find /usr/share/man -type f -name '*.gz' -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 zcat 2>/dev/null
				text_files /usr/share/doc
				find /usr/share/doc -type f -name '*.gz' -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 zcat 2>/dev/null
			} | tr -d '\000' | head -c "$N" >"$file" || true ;;
		repetitive)
			local v=$OUT/version.txt next=$OUT/version.next
			make_corpus code
			head -c $((2 * 1048576)) "$OUT/text_code.bin" >"$v"
			: >"$file"
			for ((k = 1; k <= VERSIONS * 4 && $(stat -c %s "$file") < N; k++)); do
				cat "$v" >>"$file"
				awk -v k="$k" 'NR % 97 == k % 97 { $0 = $0 " /* edit " k " */" } { print }' "$v" >"$next"
				mv "$next" "$v"
			done
			rm -f "$v"
			truncate -s "$N" "$file" ;;
	esac
	[ "$(stat -c %s "$file")" -eq "$N" ] || { echo "bench-text-lcp: the $kind corpus has only $(stat -c %s "$file") bytes" >&2; exit 1; }
}
for kind in $TEXT_KINDS; do make_corpus "$kind"; done

# --- a throwaway server ---------------------------------------------------------------

start_bench_server bench-text-lcp "shared_buffers = 16MB"
TMPDIR_PG=$CLUSTER_DIR/data/base/pgsql_tmp
psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
# the budget as a fraction of n (TEXT_MEM may be given in another unit)
mem_bytes=$(psql_ -c "SELECT pg_size_bytes('$TEXT_MEM')")
echo "bench-text-lcp: $(psql_ -c 'SELECT xxl.version()'), $(nproc) cores; n = $N bytes per corpus; xxl.memory = $TEXT_MEM (n/$(awk -v n="$N" -v m="$mem_bytes" 'BEGIN { printf "%.3g", n / m }'))"

echo "corpus,run,secs,peak_kb,shmem_kb,disk_peak,io_bytes,levels,lcp_ms,extra" >"$CSV"

# disk_sampler FILE: the largest size of pgsql_tmp until killed, into FILE
disk_sampler() {
	local max=0 s
	while :; do
		s=$(du -sb "$TMPDIR_PG" 2>/dev/null | cut -f1 || echo 0)
		[ "${s:-0}" -gt "$max" ] && max=$s && echo "$max" >"$1"
		sleep 0.05
	done
}

# xxl CORPUS RUN STATEMENT: a fresh connection, server time, VmHWM, disk peak, stats
xxl() {
	local corpus=$1 run=$2 stmt=$3 out peakfile=$WORK/disk_peak sampler
	echo 0 >"$peakfile"
	disk_sampler "$peakfile" &
	sampler=$!
	echo "== $corpus $run: $stmt" >>"$LOG"
	out=$(psql_ 2>&1 <<SQL
SET xxl.memory = '$TEXT_MEM';
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s vmhwm_kb=%s shmem_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1],
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1]);
SELECT format('STATS io=%s levels=%s lcp_ms=%s extra=%s', (SELECT sum(x) FROM unnest(bytes_read || bytes_written) x),
	coalesce(details->>'levels', ''), coalesce(details->>'lcp_ms', ''),
	concat_ws(' ', 'top=' || replace(details->>'top_level', ' ', '_'),
	          'lcp_irreducible=' || (details->>'lcp_irreducible'), 'lcp_random=' || (details->>'lcp_random_answers'),
	          'repeat_ranges=' || (details->>'repeat_ranges')))
FROM xxl.last_stats();
SQL
) || { kill "$sampler" 2>/dev/null; echo "bench-text-lcp: $corpus $run failed" >&2; printf '%s\n' "$out" | tail -5 >&2; return 1; }
	kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
	printf '%s\n' "$out" >>"$LOG"
	local r s secs vm shm io levels lcpms extra
	r=$(grep '^RESULT ' <<<"$out"); s=$(grep '^STATS ' <<<"$out")
	secs=$(sed -E 's/.*secs=([0-9.]+).*/\1/' <<<"$r"); vm=$(sed -E 's/.*vmhwm_kb=([0-9]+).*/\1/' <<<"$r")
	shm=$(sed -E 's/.*shmem_kb=([0-9]+).*/\1/' <<<"$r")
	io=$(sed -E 's/.* io=([0-9]*).*/\1/' <<<"$s"); levels=$(sed -E 's/.* levels=([0-9]*).*/\1/' <<<"$s")
	lcpms=$(sed -E 's/.* lcp_ms=([0-9.]*).*/\1/' <<<"$s"); extra=$(sed -E 's/.* extra=(.*)$/\1/' <<<"$s")
	echo "$corpus,$run,$secs,$vm,$shm,$(cat "$peakfile"),$io,$levels,$lcpms,$extra" >>"$CSV"
}

# peer CORPUS RUN COMMAND...: a peer process's RESULT line
peer() {
	local corpus=$1 run=$2 out r secs rss extra
	shift 2
	echo "== $corpus $run: $*" >>"$LOG"
	out=$("$@" 2>&1) || { echo "bench-text-lcp: $corpus $run failed: $out" >&2; return 1; }
	printf '%s\n' "$out" >>"$LOG"
	r=$(grep '^RESULT ' <<<"$out")
	secs=$(sed -E 's/.* secs=([0-9.]+).*/\1/' <<<"$r"); rss=$(sed -E 's/.*maxrss_kb=([0-9]+).*/\1/' <<<"$r")
	extra=$(sed -nE 's/.*(ranges=[0-9]+ covered=[0-9]+).*/\1/p' <<<"$r")
	echo "$corpus,$run,$secs,$rss,0,0,0,,,$extra" >>"$CSV"
}

for kind in $TEXT_KINDS; do
	file=$OUT/text_$kind.bin
	cp "$file" "$WORK/text.bin"
	chown postgres: "$WORK/text.bin"
	psql_ >>"$LOG" 2>&1 <<SQL
DROP TABLE IF EXISTS corpus;
CREATE TABLE corpus (id int, chunk bytea);
ALTER TABLE corpus ALTER COLUMN chunk SET STORAGE EXTERNAL;
INSERT INTO corpus SELECT i, pg_read_binary_file('$WORK/text.bin', i * 1048576::bigint, 1048576)
  FROM generate_series(0, ($N - 1) / 1048576) i;
VACUUM ANALYZE corpus;
SQL
	src="SELECT chunk FROM corpus ORDER BY id"
	echo "bench-text-lcp: $kind: libdivsufsort, divsufsort + Kasai"
	peer "$kind" divsufsort "$BB/suffix_divsufsort" "$file" "$N" 32
	peer "$kind" divsufsort64 "$BB/suffix_divsufsort" "$file" "$N" 64
	peer "$kind" "divsufsort+kasai" "$BB/text_lcp_baseline" "$file" lcp
	echo "bench-text-lcp: $kind: xxl.suffix_array_into at $TEXT_MEM, then with lcp => true"
	restart_server
	xxl "$kind" "xxl sa" "SELECT xxl.suffix_array_into('$src', 'sa')"
	psql_ -c "DROP TABLE sa" >>"$LOG"
	restart_server
	xxl "$kind" "xxl sa+lcp" "SELECT xxl.suffix_array_into('$src', 'sa', lcp => true)"
	psql_ -c "DROP TABLE sa" >>"$LOG"
	if [ "$kind" = prose ]; then
		echo "bench-text-lcp: prose: repeats of $REPEATS_K bytes, xxl.repeats_into and the C baseline"
		peer "$kind" "baseline repeats" "$BB/text_lcp_baseline" "$file" repeats "$REPEATS_K"
		restart_server
		xxl "$kind" "xxl repeats" "SELECT xxl.repeats_into('$src', 'rep', $REPEATS_K)"
		got=$(psql_ -c "SELECT format('ranges=%s covered=%s', count(*), sum(length)) FROM rep")
		want=$(awk -F, '$2 == "baseline repeats" { print $10 }' "$CSV")
		echo "bench-text-lcp: repeats: xxl $got, baseline $want"
		[ "$got" = "$want" ] || { echo "bench-text-lcp: the repeats differ from the baseline's" >&2; exit 1; }
		psql_ -c "DROP TABLE rep" >>"$LOG"
	fi
done

# --- report ------------------------------------------------------------------------------

echo
awk -F, -v n="$N" '
	NR == 1 { next }
	{ key = $1 "|" $2; secs[key] = $3; line[NR] = $0 }
	END {
		printf "%-11s %-17s %9s %9s %9s %9s %10s %8s %7s %9s  %s\n", "corpus", "run", "s", "peak MB", "own MB", "disk MB",
			"disk B/B", "I/O B/B", "levels", "lcp s", "top level"
		for (i = 2; i <= NR; i++) {
			split(line[i], f, ",")
			top = match(f[10], /top=[a-z_0-9]+/) ? substr(f[10], RSTART + 4, RLENGTH - 4) : "-"
			printf "%-11s %-17s %9s %9.1f %9.1f %9.1f %10.2f %8.1f %7s %9s  %s\n", f[1], f[2], f[3], f[4] / 1024,
				(f[4] - f[5]) / 1024, f[6] / 1048576, f[6] / n, f[7] / n, f[8] == "" ? "-" : f[8],
				f[9] == "" ? "-" : sprintf("%.1f", f[9] / 1000), top
		}
	}' "$CSV"
echo
echo "peak MB: VmHWM of the backend / max RSS of the peer; own: without the shared buffers the backend"
echo "touched (RssShmem); disk: the pgsql_tmp directory's largest size"
echo "(B/B: per text byte); I/O: spill bytes read + written per text byte; lcp s: the LCP operator's"
echo "own time after the suffix sorter (repeats: the windows and ranges included)."

# the ratios: per corpus into the chart's data, and as the closing lines
ratios=$(awk -F, -v dat="$DAT" '
	NR > 1 { s[$1 "|" $2] = $3; m[$1 "|" $2] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
	END {
		for (i = 1; i <= k; i++) {
			c = order[i]
			rs = s[c "|xxl sa"] / s[c "|divsufsort64"]; rl = s[c "|xxl sa+lcp"] / s[c "|divsufsort+kasai"]
			printf "%s %.2f %.2f\n", c, rs, rl >dat
			printf "ratio xxl/divsufsort64 %s = %.2f (sa), xxl/divsufsort+kasai = %.2f (sa+lcp); peak memory %.3f, %.3f\n", c,
				rs, rl, m[c "|xxl sa"] / m[c "|divsufsort64"], m[c "|xxl sa+lcp"] / m[c "|divsufsort+kasai"]
		}
		if (s["prose|baseline repeats"] > 0)
			printf "ratio xxl/baseline repeats = %.2f (time), %.3f (peak memory)\n",
				s["prose|xxl repeats"] / s["prose|baseline repeats"], m["prose|xxl repeats"] / m["prose|baseline repeats"]
	}' "$CSV")
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'; n_mb='$TEXT_MB'; mem='$TEXT_MEM'" bench/plot_text_lcp.gp >>"$LOG" 2>&1 ||
		echo "bench-text-lcp: gnuplot failed; see $LOG" >&2
fi
echo "files: $CSV $DAT $PNG $LOG"
printf '%s\n' "$ratios"
