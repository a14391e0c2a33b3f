#!/usr/bin/env bash
# run_table.sh — drives the table access method benchmark: the same rows in
# an xxl table (order key a) and in a heap table, in one run, on a
# throwaway server (docs/table.md, "Benchmark").
#
# Rows: TABLE_ROWS (50M) of (a bigint, b bigint), a pseudorandom in
# [0, 2^40) (a 32-bit hash of the row number, shifted, and its low byte:
# hashint8 is 32 bits wide, and masking it alone left a in two clusters at
# the ends, so key ranges in the middle were empty), b the row number;
# written once to a server-side file.  Each
# step runs in a fresh connection, timed by the server's clock:
#   load by COPY, into an existing empty table       heap | xxl (sorted by a)
#   load by INSERT ... SELECT from generate_series    heap | xxl
#   size (pg_total_relation_size), and the xxl table's with packing off
#   full scan: count(*), sum(b), one process          heap | xxl (aggregate scan)
#   the same with the kernel's page cache dropped first (as root)
#   full scan into an Aggregate: sum(b + 0)           heap | xxl (full scan node)
#   ORDER BY a, every row (OFFSET past the end)      heap + Sort | xxl merged
#   ORDER BY a in a window (row_number() over it)     heap + Sort | xxl merged
#   ORDER BY a LIMIT 10                                heap top-N | xxl
#   0.1% range of a: count and sum                    heap + btree index | xxl (pages skipped by key)
#   btree index build on a (heap only)
#   DELETE 1% scattered, DELETE a 10% key range, UPDATE 1% (key changed)
#   full scan and ORDER BY a after them, then VACUUM FULL | xxl.compact, size
# then compression by column type: (k bigint, v T) tables keyed by k with
# TABLE_ROWS / 10 rows, packed, plain and heap, v's bytes per row (the
# table's size less a (k) table's); and a day's range of a timestamp that
# rises with the key (full scan, packed pages skipped by their least and
# greatest value) against the heap and plain pages;
# and connected components over TABLE_EDGES (5M) random edges
# (id, source, target, cost) stored in each (xxl.connected_components at
# TABLE_MEM, 256MB): counted and their distinct components counted, and
# the call alone (its rows counted).  Every answer is compared between the
# two tables.
#
# Each step timed once on both sides also shows each backend's peak memory
# (VmHWM) and what it read (rchar: through the page cache) and wrote
# (write_bytes), in MB.
#
# Files: bench/out/table.csv, table_types.csv, table.dat + table.png (chart),
# table.log.
# Environment: TABLE_ROWS, TABLE_EDGES, TABLE_MEM, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ROWS=${TABLE_ROWS:-50000000}
EDGES=${TABLE_EDGES:-5000000}
MEM=${TABLE_MEM:-256MB}
OUT=bench/out
CSV=$OUT/table.csv
LOG=$OUT/table.log
mkdir -p "$OUT"
: >"$LOG"

echo "bench-table: build and install pgxxl"
build_and_install >>"$LOG" 2>&1
start_bench_server bench-table
psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG"
echo "bench-table: $(psql_ -c 'SELECT xxl.version()'), $ROWS rows, $EDGES edges, xxl.memory = $MEM"
echo "step,heap_s,xxl_s,ratio,heap_bytes,xxl_bytes,heap_peak_mb,xxl_peak_mb,heap_read_mb,xxl_read_mb,heap_written_mb,xxl_written_mb" >"$CSV"

# timed STATEMENT: seconds on the server's clock, in a fresh connection;
# the backend's peak memory (VmHWM, MB) and what it read and wrote (MB:
# rchar, through the page cache, and write_bytes) appended to $MEMLOG
MEMLOG=$WORK/mem.log
: >"$MEMLOG"
timed() {
	psql_ >>"$LOG" 2>&1 <<SQL
SET xxl.memory = '$MEM';
SET max_parallel_workers_per_gather = 0;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$1;
SELECT 'SECS ' || round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3);
SELECT 'MEM ' || round((regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::numeric / 1024)
	|| ' ' || round((regexp_match(pg_read_file('/proc/self/io'), 'rchar: (\d+)'))[1]::numeric / 1048576)
	|| ' ' || round((regexp_match(pg_read_file('/proc/self/io'), '\nwrite_bytes: (\d+)'))[1]::numeric / 1048576);
SQL
	grep '^MEM ' "$LOG" | tail -n 1 | cut -d' ' -f2- >>"$MEMLOG"
	grep '^SECS ' "$LOG" | tail -n 1 | cut -d' ' -f2
}

# paired REPS HEAP_STMT XXL_STMT [PREP_FMT]: the two alternated REPS times,
# each in a fresh connection (after PREP_FMT with the table's name, if
# given, untimed); prints the median seconds of each.  For the rows whose
# single runs moved by more than the target's margin.
paired() {
	local reps=$1 hs=$2 xs=$3 prep=${4:-} h=() x=()
	for _ in $(seq "$reps"); do
		[ -z "$prep" ] || psql_ -c "$(printf "$prep" th)" >>"$LOG" 2>&1
		h+=("$(timed "$hs")")
		[ -z "$prep" ] || psql_ -c "$(printf "$prep" tx)" >>"$LOG" 2>&1
		x+=("$(timed "$xs")")
	done
	echo "   ($reps runs each, alternated: heap ${h[*]}; xxl ${x[*]}; the medians below)" >&2
	printf '%s %s\n' "$(printf '%s\n' "${h[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p")" \
		"$(printf '%s\n' "${x[@]}" | sort -g | sed -n "$(( (reps + 1) / 2 ))p")"
}

# answer QUERY: its result, untimed
answer() { psql_ -c "SET max_parallel_workers_per_gather = 0" -c "$1"; }

# row STEP HEAP XXL [HEAP_BYTES XXL_BYTES]: one line of the table; with
# mem, the last two timed runs' peak and I/O (heap's, then xxl's)
row() {
	local step=$1 h=$2 x=$3 hb=${4:-} xb=${5:-}
	local ratio= hm=(- - -) xm=(- - -)
	[ -n "$h" ] && [ -n "$x" ] && ratio=$(awk -v h="$h" -v x="$x" 'BEGIN { if (h > 0) printf "%.3f", x / h }')
	if [ "${mem:-}" = 1 ]; then
		read -r -a hm < <(tail -n 2 "$MEMLOG" | sed -n 1p)
		read -r -a xm < <(tail -n 1 "$MEMLOG")
	fi
	echo "$step,$h,$x,$ratio,$hb,$xb,${hm[0]},${xm[0]},${hm[1]},${xm[1]},${hm[2]},${xm[2]}" >>"$CSV"
	printf '%-34s %10s %10s %8s   %5s %5s   %6s %6s   %6s %6s\n' "$step" "${h:--}" "${x:--}" "${ratio:--}" \
		"${hm[0]}" "${xm[0]}" "${hm[1]}" "${xm[1]}" "${hm[2]}" "${xm[2]}"
}
# rowm: row with the two timed runs' memory and I/O
rowm() { mem=1 row "$@"; }

DATA=$WORK/rows.copy
psql_ -c "COPY (SELECT (((hashint8(g)::bigint & 4294967295) << 8) | (g & 255)) AS a, g AS b
	FROM generate_series(1, $ROWS) g) TO '$DATA'"
psql_ <<SQL
CREATE TABLE th (a bigint, b bigint);
CREATE TABLE tx (a bigint, b bigint) USING xxl;
SELECT xxl.alter_table_set('tx', 'a');
CREATE TABLE th2 (a bigint, b bigint);
CREATE TABLE tx2 (a bigint, b bigint) USING xxl;
SELECT xxl.alter_table_set('tx2', 'a');
CHECKPOINT;
SQL
restart_server

printf '%-34s %10s %10s %8s   %11s   %13s   %13s\n' "step" "heap s" "xxl s" "xxl/heap" "peak MB h/x" "read MB h/x" "written MB h/x"
# (heap's COPY moved between 9.9 and 13.2 s in single runs: medians of 3)
read -r h x < <(paired 3 "COPY th FROM '$DATA'" "COPY tx FROM '$DATA'" "TRUNCATE %s; CHECKPOINT")
row "load: COPY" "$h" "$x"
gen="SELECT (((hashint8(g)::bigint & 4294967295) << 8) | (g & 255)), g FROM generate_series(1, $ROWS) g"
rowm "load: INSERT ... SELECT" "$(timed "INSERT INTO th2 $gen")" "$(timed "INSERT INTO tx2 $gen")"
psql_ -c "VACUUM ANALYZE th" -c "VACUUM ANALYZE tx" -c "CHECKPOINT" >>"$LOG"
hb=$(psql_ -c "SELECT pg_total_relation_size('th')")
xb=$(psql_ -c "SELECT pg_total_relation_size('tx')")
row "size (bytes; ratio of sizes)" "$hb" "$xb" "$hb" "$xb"
psql_ -c "CREATE TABLE txp (a bigint, b bigint) USING xxl" -c "SELECT xxl.alter_table_set('txp', 'a')" \
	-c "SET xxl.table_compression = off" -c "INSERT INTO txp SELECT * FROM tx" -c "VACUUM ANALYZE txp" >>"$LOG"
pb=$(psql_ -c "SELECT pg_total_relation_size('txp')")
row "size, xxl packing off" "$hb" "$pb" "$hb" "$pb"
restart_server

q_scan="SELECT count(*), sum(b) FROM %s"
rowm "full scan: count and sum" "$(timed "$(printf "$q_scan" th)")" "$(timed "$(printf "$q_scan" tx)")"
# the same from disk: the kernel's page cache dropped before each (root only)
cold() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; restart_server; timed "$1"; }
if [ -w /proc/sys/vm/drop_caches ]; then
	rowm "full scan from disk" "$(cold "$(printf "$q_scan" th)")" "$(cold "$(printf "$q_scan" tx)")"
fi
rowm "full scan, packing off" "$(timed "$(printf "$q_scan" th)")" "$(timed "$(printf "$q_scan" txp)")"
# an aggregate the aggregate scan does not take: the full scan node's rows into Aggregate
q_scan0="SELECT count(*), sum(b + 0) FROM %s"
rowm "full scan into Aggregate" "$(timed "$(printf "$q_scan0" th)")" "$(timed "$(printf "$q_scan0" tx)")"
psql_ -c "DROP TABLE txp" >>"$LOG"
# every row in key order, handed to a Limit that discards them (no client transfer)
q_order="SELECT * FROM %s ORDER BY a OFFSET $ROWS"
rowm "ORDER BY a: all rows" "$(timed "$(printf "$q_order" th)")" "$(timed "$(printf "$q_order" tx)")"
q_window="SELECT max(rn), sum(b) FROM (SELECT b, row_number() OVER (ORDER BY a) AS rn FROM %s) s"
rowm "ORDER BY a in a window" "$(timed "$(printf "$q_window" th)")" "$(timed "$(printf "$q_window" tx)")"
q_limit="SELECT * FROM %s ORDER BY a LIMIT 10"
rowm "ORDER BY a LIMIT 10" "$(timed "$(printf "$q_limit" th)")" "$(timed "$(printf "$q_limit" tx)")"
row "btree index on a (heap only)" "$(timed "CREATE INDEX th_a ON th (a)")" ""
psql_ -c "ANALYZE th" >>"$LOG"
lo=$(( (1 << 40) / 2 )); hi=$(( lo + (1 << 40) / 1000 ))
q_range="SELECT count(*), sum(b) FROM %s WHERE a BETWEEN $lo AND $hi"
rowm "0.1% range of a" "$(timed "$(printf "$q_range" th)")" "$(timed "$(printf "$q_range" tx)")"
# pages the xxl scan read for the range, against the table's pages
pages=$(psql_ -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN (ANALYZE, FORMAT JSON) $(printf "$q_range" tx)" |
	grep -o '"Pages Read": [0-9]*' | grep -o '[0-9]*$' || true)
total=$(psql_ -c "SELECT pg_relation_size('tx') / current_setting('block_size')::int")
echo "   the xxl range scan read ${pages:-?} of $total pages"
echo "range pages read,,${pages:-},,$total," >>"$CSV"

# index lookups: a btree index on b (not the order key) in both, 10 000
# random keys looked up through it (dropped afterwards, so the DML below
# runs as before)
rowm "btree index on b" "$(timed "CREATE INDEX th_b ON th (b)")" "$(timed "CREATE INDEX tx_b ON tx (b)")"
psql_ -c "ANALYZE th" -c "ANALYZE tx" >>"$LOG"
q_look="SELECT count(*), sum(a) FROM %s WHERE b = ANY (ARRAY(SELECT 1 + (hashint8(g) & 2147483647) %% $ROWS FROM generate_series(1, 10000) g))"
read -r h x < <(paired 3 "$(printf "$q_look" th)" "$(printf "$q_look" tx)")
row "10 000 index lookups on b" "$h" "$x"
plan=$(psql_ -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN $(printf "$q_look" tx)" | grep -o 'Index Scan\|Bitmap Index Scan' | sed -n 1p)
echo "   the xxl lookups' plan: ${plan:-no index scan}"

# the answers must agree
fail=0
for q in "$q_scan" "$q_window" "$q_limit" "$q_range" "$q_look"; do
	h=$(answer "$(printf "$q" th)"); x=$(answer "$(printf "$q" tx)")
	if [ "$h" != "$x" ]; then echo "bench-table: answers differ: $q" >&2; fail=1; fi
done
[ "$(answer "SELECT count(*) FROM th2")" = "$(answer "SELECT count(*) FROM tx2")" ] ||
	{ echo "bench-table: INSERT ... SELECT loads differ" >&2; fail=1; }
psql_ -c "DROP INDEX th_b" -c "DROP INDEX tx_b" >>"$LOG"

# deletes and updates (heap: through its btree index on a where it helps)
q_del1="DELETE FROM %s WHERE b %% 100 = 0"
rowm "DELETE 1% scattered" "$(timed "$(printf "$q_del1" th)")" "$(timed "$(printf "$q_del1" tx)")"
lo2=$(( (1 << 40) / 4 )); hi2=$(( lo2 + (1 << 40) / 10 ))
q_del2="DELETE FROM %s WHERE a BETWEEN $lo2 AND $hi2"
rowm "DELETE a 10% key range" "$(timed "$(printf "$q_del2" th)")" "$(timed "$(printf "$q_del2" tx)")"
q_upd="UPDATE %s SET a = a + 1, b = -b WHERE b %% 100 = 1"
rowm "UPDATE 1% (key changed)" "$(timed "$(printf "$q_upd" th)")" "$(timed "$(printf "$q_upd" tx)")"
rowm "full scan after DML" "$(timed "$(printf "$q_scan" th)")" "$(timed "$(printf "$q_scan" tx)")"
rowm "ORDER BY a after DML" "$(timed "$(printf "$q_order" th)")" "$(timed "$(printf "$q_order" tx)")"
for q in "$q_scan" "$q_limit" "$q_range"; do
	h=$(answer "$(printf "$q" th)"); x=$(answer "$(printf "$q" tx)")
	if [ "$h" != "$x" ]; then echo "bench-table: answers differ after DML: $q" >&2; fail=1; fi
done
rowm "rewrite: VACUUM FULL | compact" "$(timed "VACUUM FULL th")" "$(timed "SELECT xxl.compact('tx')")"
hb=$(psql_ -c "SELECT pg_total_relation_size('th')")
xb=$(psql_ -c "SELECT pg_total_relation_size('tx')")
row "size after rewrite (bytes)" "$hb" "$xb" "$hb" "$xb"

# compression by column type: v's bytes per row in (k, v) tables keyed by k.
# Packed: the bytes v's column takes on the table's pages (its region on a
# packed page, its width times the rows on a plain one), read with
# pageinspect, since a page holds at most 2 048 rows (the table's size
# less k's would hide a narrow column); plain: v's width; heap: the
# table's size less a (k) table's.  k's own bytes per row (packed) too.
CROWS=$(( ROWS / 10 ))
echo "compression by column type ($CROWS rows of (k bigint, v), keyed by k; bytes per row):"
printf '   %-30s %8s %8s %8s %12s %8s\n' "v" "heap" "plain" "packed" "packed/heap" "k packed"
echo "step,heap_bytes,plain_bytes,packed_bytes,k_packed_bytes" >"$OUT/table_types.csv"
psql_ -c "CREATE EXTENSION IF NOT EXISTS pageinspect" >>"$LOG"
kexpr="(hashint8(g) & 1099511627775)"
# colbytes TABLE: "v k" bytes per row on the table's data pages (u16 at o of page p: u16(p, o))
colbytes() {
	psql_ <<SQL
CREATE OR REPLACE FUNCTION pg_temp.u16(p bytea, o int) RETURNS int LANGUAGE sql IMMUTABLE
  AS 'SELECT get_byte(p, o) + 256 * get_byte(p, o + 1)';
SELECT round(sum(CASE WHEN kind = 5 THEN lower - vstart WHEN width > 0 THEN nrows * (width - 9)
                      ELSE sp - upper - 9 * nrows END)::numeric / sum(nrows), 2),
       round(sum(CASE WHEN kind = 5 THEN vstart - kstart ELSE nrows * 8 END)::numeric / sum(nrows), 2)
FROM (SELECT pg_temp.u16(p, sp + 4) AS kind, pg_temp.u16(p, sp + 6) AS nrows,
             pg_temp.u16(p, sp + 12) AS width, pg_temp.u16(p, 12) AS lower, pg_temp.u16(p, 14) AS upper, sp,
             coalesce(nullif(pg_temp.u16(p, 24 + 6), 0), pg_temp.u16(p, 24 + 4)) AS kstart,
             coalesce(nullif(pg_temp.u16(p, 64 + 6), 0), pg_temp.u16(p, 64 + 4)) AS vstart
      FROM (SELECT p, pg_temp.u16(p, 16) AS sp
            FROM generate_series(1, pg_relation_size('$1') / 8192 - 1) b,
                 LATERAL get_raw_page('$1', b::int) p) r) x
WHERE kind IN (3, 5)
SQL
}
# ctype TYPE EXPR: "heap_size plain_width packed_v packed_k" of (k, v) tables
ctype() {
	local type=$1 expr=$2
	psql_ >>"$LOG" <<SQL
DROP TABLE IF EXISTS ch, cx;
CREATE TABLE ch (k bigint $( [ -n "$type" ] && echo ", v $type"));
CREATE TABLE cx (LIKE ch) USING xxl;
SELECT xxl.alter_table_set('cx', 'k');
INSERT INTO cx SELECT $kexpr $( [ -n "$type" ] && echo ", $expr") FROM generate_series(1, $CROWS) g;
INSERT INTO ch SELECT * FROM cx;
VACUUM ch;
SQL
	echo "$(psql_ -c "SELECT pg_relation_size('ch')") $(psql_ -c "SELECT coalesce(nullif(sum(attlen), -1)::text, 'var') FROM pg_attribute WHERE attrelid = 'cx'::regclass AND attname = 'v'") $(colbytes cx | tr '|' ' ')"
}
read -r kh _ < <(ctype "" "")
for spec in "bigint rising with k|bigint|$kexpr * 3 + 7" \
	"bigint random (64 bits)|bigint|(hashint8(-g)::bigint << 32) # (hashint8(g * 11)::bigint & 4294967295)" \
	"integer in 0..999|integer|(hashint8(g * 7) & 1023)::int % 1000" \
	"timestamptz rising with k|timestamptz|timestamptz '2024-01-01' + $kexpr * interval '1 microsecond'" \
	"date in ten years|date|date '2015-01-01' + (hashint8(g * 3) & 4095)::int % 3650" \
	"boolean|boolean|g % 3 = 0" \
	"double precision random|float8|hashint8(g * 5) / 1e9" \
	"uuid random|uuid|md5(g::text)::uuid" \
	"text of 4 values|text|(ARRAY['new', 'paid', 'shipped', 'returned'])[1 + (hashint8(g) & 3)]" \
	"text, c and a number below 5000|text|concat('c', (hashint8(g * 13) & 8191) % 5000)" \
	"text, md5 (32 characters)|text|md5(g::text)"; do
	IFS='|' read -r name type expr <<<"$spec"
	read -r h w vx kx < <(ctype "$type" "$expr")
	vh=$(awk -v a="$h" -v b="$kh" -v n="$CROWS" 'BEGIN { printf "%.2f", (a - b) / n }')
	printf '   %-30s %8s %8s %8s %12s %8s\n' "$name" "$vh" "$w" "$vx" \
		"$(awk -v a="$vx" -v b="$vh" 'BEGIN { printf "%.3f", a / b }')" "$kx"
	echo "v $name,$vh,$w,$vx,$kx" >>"$OUT/table_types.csv"
done
psql_ -c "DROP TABLE IF EXISTS ch, cx" >>"$LOG"

# a filter on a column that is not the key: a day of a timestamp rising with it
psql_ >>"$LOG" <<SQL
CREATE TABLE tt_x (k bigint, t timestamptz, v bigint) USING xxl;
SELECT xxl.alter_table_set('tt_x', 'k');
INSERT INTO tt_x SELECT g, timestamptz '2024-01-01' + g * interval '00:00:01', hashint8(g) FROM generate_series(1, $ROWS) g;
CREATE TABLE tt_p (LIKE tt_x) USING xxl;
SELECT xxl.alter_table_set('tt_p', 'k');
SET xxl.table_compression = off;
INSERT INTO tt_p SELECT * FROM tt_x;
RESET xxl.table_compression;
CREATE TABLE tt_h AS SELECT * FROM tt_x;
VACUUM ANALYZE tt_x;
VACUUM ANALYZE tt_p;
VACUUM ANALYZE tt_h;
SQL
q_day="SELECT count(*), sum(v) FROM %s WHERE t >= '2024-01-20' AND t < '2024-01-21'"
rowm "a day of t (not the key), packed" "$(timed "$(printf "$q_day" tt_h)")" "$(timed "$(printf "$q_day" tt_x)")"
rowm "the same, packing off" "$(timed "$(printf "$q_day" tt_h)")" "$(timed "$(printf "$q_day" tt_p)")"
skipped=$(psql_ -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN (ANALYZE, FORMAT JSON) $(printf "$q_day" tt_x)" |
	grep -o '"Pages Skipped": [0-9]*' | grep -o '[0-9]*$' || true)
echo "   the packed scan skipped ${skipped:-?} of $(psql_ -c "SELECT pg_relation_size('tt_x') / 8192") pages"
for t in tt_x tt_p; do
	[ "$(answer "$(printf "$q_day" tt_h)")" = "$(answer "$(printf "$q_day" $t)")" ] ||
		{ echo "bench-table: the day's answers differ ($t)" >&2; fail=1; }
done
psql_ -c "DROP TABLE tt_x, tt_p, tt_h" >>"$LOG"

# connected components over an edge table of each kind
psql_ <<SQL
CREATE TABLE eh AS SELECT g AS id, (hashint8(g) & 1048575) AS source,
	(hashint8(-g) & 1048575) AS target, random() AS cost FROM generate_series(1, $EDGES) g;
CREATE TABLE ex USING xxl AS SELECT * FROM eh;
VACUUM ANALYZE eh;
VACUUM ANALYZE ex;
SQL
restart_server
# (a fraction of a second each: medians of 5, alternated)
q_cc="SELECT count(*), count(DISTINCT component) FROM xxl.connected_components('%s')"
read -r h x < <(paired 5 "$(printf "$q_cc" eh)" "$(printf "$q_cc" ex)")
row "connected components (5M edges)" "$h" "$x"
# the call alone: its rows counted, not also sorted for count(DISTINCT)
q_call="SELECT count(*) FROM xxl.connected_components('%s')"
read -r h x < <(paired 5 "$(printf "$q_call" eh)" "$(printf "$q_call" ex)")
row "components, the call alone" "$h" "$x"
[ "$(answer "$(printf "$q_cc" eh)")" = "$(answer "$(printf "$q_cc" ex)")" ] ||
	{ echo "bench-table: components differ" >&2; fail=1; }

awk -F, 'NR > 1 && $1 !~ /^(size|range pages)/ && $2 != "" && $3 != "" { gsub(/ /, "_", $1); print $1, $2, $3 }' "$CSV" >"$OUT/table.dat"
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$OUT/table.dat'; outfile='$OUT/table.png'; rows='$ROWS'" bench/plot_table.gp &&
		echo "chart: $OUT/table.png"
fi
echo "data: $CSV; log: $LOG"
[ $fail = 0 ] && echo "answers agree: heap and xxl"
exit $fail
