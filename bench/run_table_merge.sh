#!/usr/bin/env bash
# run_table_merge.sh — a table fed one row per statement: an xxl table with
# a primary key and one with an order key against a heap table with a
# primary key, the same statements in one run on one server
# (`make bench-table-merge`; docs/table.md, "Merging small segments").
#
# Each table gets INSERTS single-row INSERTs of (id int, t timestamptz, v
# text) from one DO block (a statement each), then VACUUM, which merges the
# xxl tables' segments.  Measured, each in a fresh connection with the
# server's clock: the INSERTs, the size before, count(*) before, VACUUM, the
# size after (table and index), count(*) after; ratios against the heap.
# Autovacuum is off for the tables, so the VACUUM is the one that merges.
#
# Output: a table and bench/out/table_merge.{csv,log,dat,png}.
# Environment: INSERTS (20000), KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

INSERTS=${INSERTS:-20000}
OUT=bench/out
CSV=$OUT/table_merge.csv
DAT=$OUT/table_merge.dat
LOG=$OUT/table_merge.log
PNG=$OUT/table_merge.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-table-merge: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-table-merge: build failed, see $LOG" >&2; exit 1; }
start_bench_server bench-table-merge
psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
echo "bench-table-merge: $INSERTS one-row INSERTs per table, $(nproc) cores, load:$(uptime | sed 's/.*load average//')"

# the tables: name|DDL after CREATE TABLE name|what follows
declare -A DDL=(
	[heap_pk]="(id int PRIMARY KEY, t timestamptz, v text) WITH (autovacuum_enabled = off)"
	[xxl_pk]="(id int PRIMARY KEY, t timestamptz, v text) USING xxl WITH (autovacuum_enabled = off)"
	[xxl_key]="(id int, t timestamptz, v text) USING xxl WITH (autovacuum_enabled = off)"
)
TABLES="heap_pk xxl_pk xxl_key"
for t in $TABLES; do
	psql_ -c "CREATE TABLE $t ${DDL[$t]}" >>"$LOG" 2>&1
done
psql_ -c "SELECT xxl.alter_table_set('xxl_key', order_by => 'id')" >>"$LOG" 2>&1

# timed STATEMENT: seconds by the server's clock, in a fresh connection
timed() {
	psql_ 2>>"$LOG" <<SQL | grep '^SECS ' | cut -d' ' -f2
SET client_min_messages = warning;
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$1;
SELECT 'SECS ' || round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 4);
SQL
}
size_mb() { psql_ -c "SELECT round(pg_relation_size('$1') / 1048576.0, 2)"; }
index_mb() {
	psql_ -c "SELECT coalesce(round(sum(pg_relation_size(indexrelid)) / 1048576.0, 2), 0) FROM pg_index WHERE indrelid = '$1'::regclass"
}

echo "table,inserts_s,size_before_mb,count_before_s,vacuum_s,size_after_mb,index_mb,count_after_s" >"$CSV"
for t in $TABLES; do
	ins=$(timed "DO \$\$ BEGIN FOR i IN 1..$INSERTS LOOP INSERT INTO $t VALUES (i, now(), md5(i::text)); END LOOP; END \$\$")
	before=$(size_mb "$t")
	cb=$(timed "SELECT count(*) FROM $t")
	vac=$(timed "VACUUM $t")
	after=$(size_mb "$t")
	idx=$(index_mb "$t")
	ca=$(timed "SELECT count(*) FROM $t")
	[ "$(psql_ -c "SELECT count(*) FROM $t")" = "$INSERTS" ] ||
		{ echo "bench-table-merge: $t lost rows" >&2; exit 1; }
	echo "$t,$ins,$before,$cb,$vac,$after,$idx,$ca" >>"$CSV"
done

ratio() { echo "$1 / $2" | bc -l; }
IFS=, read -r _ hi hb hcb hv ha hx hca < <(grep '^heap_pk,' "$CSV")
printf '\n%-9s %10s %10s %10s %10s %10s %10s %10s\n' table inserts "size" "count(*)" VACUUM "size" index "count(*)"
printf '%-9s %10s %10s %10s %10s %10s %10s %10s\n' "" "" before before "" after after after
: >"$DAT"
for t in $TABLES; do
	IFS=, read -r _ i b cb v a x ca < <(grep "^$t," "$CSV")
	printf '%-9s %9.2fs %8.2fMB %9.4fs %9.4fs %8.2fMB %8.2fMB %9.4fs\n' "$t" "$i" "$b" "$cb" "$v" "$a" "$x" "$ca"
	[ "$t" = heap_pk ] && continue
	printf '  /heap   %9.2f  %9.2f  %9.2f  %9s  %9.2f  %9.2f  %9.2f\n' "$(ratio "$i" "$hi")" \
		"$(ratio "$b" "$hb")" "$(ratio "$cb" "$hcb")" "" "$(ratio "$a" "$ha")" "$(ratio "$x" "$hx")" \
		"$(ratio "$ca" "$hca")"
	printf '"%s" %.3f %.3f %.3f %.3f\n' "$t" "$(ratio "$i" "$hi")" "$(ratio "$b" "$hb")" \
		"$(ratio "$a" "$ha")" "$(ratio "$ca" "$hca")" >>"$DAT"
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "dat='$DAT'; png='$PNG'; inserts='$INSERTS'" bench/plot_table_merge.gp >>"$LOG" 2>&1 &&
		echo "bench-table-merge: chart $PNG"
fi
echo "bench-table-merge: $CSV, $LOG"
