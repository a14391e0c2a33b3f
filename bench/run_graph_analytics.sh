#!/usr/bin/env bash
# run_graph_analytics.sh — the analytics half of `make bench-graph`:
# triangles, coloring, the maximal independent set and PageRank of pgxxl
# against their peers on the same random graphs, in one run, on a
# throwaway server.
#
# For each size (ANALYTICS_SIZES, default "small big": 1M nodes / 5M edges
# and 10M / 50M, source and target uniform in 1..n, an UNLOGGED table)
# it measures, each in a fresh connection, every statement materializing
# its result the same way where it has rows (CREATE UNLOGGED TABLE AS):
#   triangles   SQL count over the deduplicated, degree-free oriented edge
#               table (a < b; built untimed; hash joins, work_mem = SQL_MEM)
#               | xxl.triangle_count, and xxl.node_triangles
#   coloring    pgr_sequentialVertexColoring (small only, unless BIG_PGR=1)
#               | xxl.coloring; colors used by each
#   MIS         xxl.maximal_independent_set (time and set size)
#   PageRank    a SQL power iteration (PR_SQL_ITERS_<size> iterations, one
#               INSERT ... SELECT with a join and GROUP BY per iteration)
#               | xxl.pagerank (20 iterations, tolerance 0): time per iteration;
#               the ranks after PR_SQL_ITERS iterations are compared
# pgxxl runs at xxl.memory = AN_MEM_<size> (512MB, big 2GB: in memory;
# the SQL peers get work_mem = SQL_MEM) and AN_EXT_MEM_<size> (external:
# tiny 4MB, small 32MB, big 64MB); its answers are checked (untimed): the count equals
# SQL's, the coloring and the independent set are valid, the ranks match
# the SQL iteration's after the same iterations.
#
# Reported per run: time (server clock), peak backend memory (VmHWM), and
# for pgxxl the path, spill bytes and the budget's peak.  Ratios are
# pgxxl / peer from the same run.  Files: bench/out/analytics.csv,
# analytics.dat + analytics.png (chart), analytics.log.
#
# Then the thesis's MIS benchmark (THESIS_MIS=1, THESIS_EDGES, THESIS_MEM;
# see below).
#
# Environment: ANALYTICS_SIZES, ANALYTICS_FUNCS ("triangles coloring
# pagerank"; coloring includes the MIS), AN_MEM_<size>, AN_EXT_MEM_<size>, SQL_MEM
# (1GB), PR_SQL_ITERS_small (20), PR_SQL_ITERS_big (3), BIG_PGR (0), SEED.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

ANALYTICS_SIZES=${ANALYTICS_SIZES:-small big}
AN_MEM_tiny=${AN_MEM_tiny:-512MB}
AN_MEM_small=${AN_MEM_small:-512MB}
AN_MEM_big=${AN_MEM_big:-2GB}
AN_EXT_MEM_tiny=${AN_EXT_MEM_tiny:-4MB}
AN_EXT_MEM_small=${AN_EXT_MEM_small:-32MB}
AN_EXT_MEM_big=${AN_EXT_MEM_big:-64MB}
SQL_MEM=${SQL_MEM:-1GB}
PR_SQL_ITERS_small=${PR_SQL_ITERS_small:-20}
PR_SQL_ITERS_big=${PR_SQL_ITERS_big:-3}
PR_SQL_ITERS_tiny=${PR_SQL_ITERS_tiny:-20}
BIG_PGR=${BIG_PGR:-0}
SEED=${SEED:-0.42}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
OUT=bench/out
CSV=$OUT/analytics.csv
DAT=$OUT/analytics.dat
LOG=$OUT/analytics.log
PNG=$OUT/analytics.png
mkdir -p "$OUT"
: >"$LOG"


echo "bench-graph-analytics: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-graph-analytics: build failed, see $LOG" >&2; exit 1; }
install_missing bench-graph-analytics postgresql-15-pgrouting postgresql-15-postgis-3 gnuplot-nox

start_bench_server bench-analytics
psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" -c "CREATE EXTENSION pgrouting CASCADE" >>"$LOG" 2>&1
echo "bench-graph-analytics: $(psql_ -c 'SELECT xxl.version()'), pgRouting $(psql_ -c 'SELECT pgr_version()'), $(nproc) cores"
echo "bench-graph-analytics: xxl.memory small $AN_MEM_small, big $AN_MEM_big; external rows small $AN_EXT_MEM_small, big $AN_EXT_MEM_big; SQL work_mem $SQL_MEM"

echo "size,function,tool,variant,memory,secs,vmhwm_kb,path,bytes_written,budget_peak,answer,per_iter_s" >"$CSV"

# measure SIZE FUNCTION TOOL VARIANT MEMORY ANSWER_SQL STATEMENT...
# One fresh connection: a scan of the table $WARM (untimed: the first read
# of a table after the restart costs a third more, which would fall on
# whoever reads first), the statements, the server-side time around the
# last one, the backend's VmHWM, pgxxl's statistics, and ANSWER_SQL's
# value (run after the timing) as the row's answer.
measure() {
	local size=$1 fn=$2 tool=$3 variant=$4 mem=$5 answer=$6 stmt=$7
	local out line secs vm stats
	echo "== $size $fn $tool $variant ($mem): $stmt" >>"$LOG"
	local setmem="SET work_mem = '$SQL_MEM';"
	# pgxxl's rows go through the caller's tuplestore: work_mem as it comes
	[ "$mem" = - ] || setmem="SET xxl.memory = '$mem';"
	out=$(psql_ 2>&1 <<SQL
$setmem
SET max_parallel_workers_per_gather = 0;
${WARM:+SELECT count(*) FROM $WARM;}
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s vmhwm_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]);
SELECT format('STATS path=%s written=%s peak=%s', details->>'path',
	(SELECT sum(b) FROM unnest(bytes_written) b), memory_peak) FROM xxl.last_stats();
SET enable_nestloop = off;
SELECT 'ANSWER ' || ($answer);
SQL
	) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-graph-analytics: $tool $fn failed, see $LOG" >&2; exit 1; }
	printf '%s\n' "$out" >>"$LOG"
	line=$(printf '%s\n' "$out" | grep '^RESULT ')
	secs=${line#*secs=}; secs=${secs%% *}
	vm=${line##*vmhwm_kb=}
	stats=$(printf '%s\n' "$out" | grep '^STATS ' || true)
	kv() { printf '%s\n' "$stats" | sed -nE "s/.* $1=([^ ]*).*/\1/p"; }
	local ans
	ans=$(printf '%s\n' "$out" | sed -n 's/^ANSWER //p')
	if [ "$tool" = pgxxl ]; then
		echo "$size,$fn,$tool,$variant,$mem,$secs,$vm,$(kv path),$(kv written),$(kv peak),$ans," >>"$CSV"
	else
		echo "$size,$fn,$tool,$variant,-,$secs,$vm,,,,$ans," >>"$CSV"
	fi
}

fresh() { local IFS=,; psql_ -c "DROP TABLE IF EXISTS $*" >>"$LOG" 2>&1; }
# whether ANALYTICS_FUNCS asks for a part (triangles, coloring: with the MIS, pagerank)
want() { case " ${ANALYTICS_FUNCS:-triangles coloring pagerank} " in *" $1 "*) return 0 ;; esac; return 1; }

for size in $ANALYTICS_SIZES; do
	n=$(graph_nodes_of "$size"); m=$(graph_edges_of "$size"); g=ga_$size
	ext=AN_EXT_MEM_$size; AN_EXT_MEM=${!ext}
	mem=AN_MEM_$size; AN_MEM=${!mem}
	[ -n "$n" ] || { echo "bench-graph-analytics: unknown size $size" >&2; exit 2; }
	echo "bench-graph-analytics: generating $g: $n nodes, $m edges"
	psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE $g AS
SELECT (1 + floor(random() * $n))::bigint AS source, (1 + floor(random() * $n))::bigint AS target
FROM generate_series(1, $m);
SET work_mem = '$SQL_MEM';
CREATE UNLOGGED TABLE ${g}_o AS
SELECT DISTINCT least(source, target) AS a, greatest(source, target) AS b FROM $g WHERE source <> target;
VACUUM ANALYZE $g; VACUUM ANALYZE ${g}_o;
SQL
	restart_server

	# --- triangles
	if want triangles; then
	WARM=${g}_o
	measure "$size" triangles sql count - "SELECT n FROM tri_sql" \
		"CREATE TEMP TABLE tri_sql AS SELECT count(*) AS n FROM ${g}_o e1 JOIN ${g}_o e2 ON e2.a = e1.b JOIN ${g}_o e3 ON e3.a = e1.a AND e3.b = e2.b"
	WARM=$g
	for v in "memory $AN_MEM" "external $AN_EXT_MEM"; do
		set -- $v
		measure "$size" triangles pgxxl "$1" "$2" "SELECT n FROM tri_x" \
			"CREATE TEMP TABLE tri_x AS SELECT xxl.triangle_count('$g') AS n"
		measure "$size" node_triangles pgxxl "$1" "$2" "SELECT sum(triangles) / 3 FROM ntri_x" \
			"CREATE TEMP TABLE ntri_x AS SELECT * FROM xxl.node_triangles('$g')"
	done
	fi

	# --- coloring
	if want coloring && { [ "$size" != big ] || [ "$BIG_PGR" = 1 ]; }; then
		measure "$size" coloring pgrouting pgr - "SELECT max(color_id) FROM col_pgr" \
			"CREATE TEMP TABLE col_pgr AS SELECT * FROM pgr_sequentialVertexColoring('SELECT row_number() OVER () AS id, source, target, 1 AS cost FROM $g')"
	fi
	want coloring &&
	for v in "memory $AN_MEM" "external $AN_EXT_MEM"; do
		set -- $v
		measure "$size" coloring pgxxl "$1" "$2" \
			"(SELECT max(color) FROM col_x) || CASE WHEN EXISTS (SELECT FROM $g e JOIN col_x x ON x.node = e.source JOIN col_x y ON y.node = e.target WHERE e.source <> e.target AND x.color = y.color) THEN ' INVALID' ELSE '' END" \
			"CREATE TEMP TABLE col_x AS SELECT * FROM xxl.coloring('$g')"
		measure "$size" mis pgxxl "$1" "$2" \
			"(SELECT count(*) FROM mis_x) || CASE WHEN EXISTS (SELECT FROM $g e JOIN mis_x x ON x.node = e.source JOIN mis_x y ON y.node = e.target WHERE e.source <> e.target) THEN ' INVALID' ELSE '' END" \
			"CREATE TEMP TABLE mis_x AS SELECT * FROM xxl.maximal_independent_set('$g')"
	done

	# --- PageRank
	if want pagerank; then
	iters=PR_SQL_ITERS_$size; iters=${!iters}
	fresh pr_l pr_w pr_r
	psql_ >>"$LOG" 2>&1 <<SQL
CREATE UNLOGGED TABLE pr_l AS SELECT source AS u, target AS v FROM $g;
CREATE UNLOGGED TABLE pr_w AS SELECT n, coalesce(c, 0) AS ow FROM
	(SELECT source AS n FROM $g UNION SELECT target FROM $g) x LEFT JOIN (SELECT u, count(*)::float8 AS c FROM pr_l GROUP BY u) o ON o.u = x.n;
VACUUM ANALYZE pr_l; VACUUM ANALYZE pr_w;
SQL
	measure "$size" pagerank sql "iter" - "SELECT round(sum(r)::numeric, 9) FROM pr_r" "
CREATE UNLOGGED TABLE pr_r AS SELECT n, 1.0::float8 / (SELECT count(*) FROM pr_w) AS r FROM pr_w;
DO \$\$
DECLARE cnt bigint := (SELECT count(*) FROM pr_w); dang float8;
BEGIN
	FOR i IN 1..$iters LOOP
		SELECT coalesce(sum(r), 0) INTO dang FROM pr_r JOIN pr_w USING (n) WHERE ow = 0;
		CREATE UNLOGGED TABLE pr_next AS
			SELECT w.n, 0.15 / cnt + 0.85 * (dang / cnt + coalesce(s.c, 0)) AS r
			FROM pr_w w LEFT JOIN (SELECT l.v, sum(r.r / w.ow) AS c FROM pr_l l JOIN pr_r r ON r.n = l.u
				JOIN pr_w w ON w.n = l.u GROUP BY l.v) s ON s.v = w.n;
		DROP TABLE pr_r;
		ALTER TABLE pr_next RENAME TO pr_r;
	END LOOP;
END \$\$"
	sed -i '$ s/,$/,'"$iters"'/' "$CSV"
	for v in "memory $AN_MEM" "external $AN_EXT_MEM"; do
		set -- $v
		measure "$size" pagerank pgxxl "$1" "$2" "SELECT round(sum(rank)::numeric, 9) FROM pr_x" \
			"CREATE TEMP TABLE pr_x AS SELECT * FROM xxl.pagerank('$g', 0.85, 20, 0)"
		# the answer: the largest difference to the SQL iteration's ranks after as many iterations
		sed -i '$ s/,[^,]*,$/,maxdiff '"$(psql_ -c "SET xxl.memory = '$2'; SELECT max(abs(p.rank - s.r))::float4::text FROM xxl.pagerank('$g', 0.85, $iters, 0) p JOIN pr_r s ON s.n = p.node")"',20/' "$CSV"
	done
	fi
	fresh pr_l pr_w pr_r "${g}_o" "$g"
	WARM=
done

# --- the thesis's MIS benchmark (digest §3.1): its graph family, its memory ---------
# Random edges (random() - 1, random() - 1), target redrawn while equal to
# the source, ids over the whole 31-bit range; 2000 MB of 16-byte edges =
# 131,072,000 edges; 512 MB of memory.  STXXL pipelined took 228 s on one
# disk and 208 s on four (generation, sort, duplicate removal and MIS
# fused); here the edges are a table and the time is reading it, sorting,
# removing duplicates and the MIS (time-forward processing).
if [ "${THESIS_MIS:-1}" = 1 ]; then
	te=${THESIS_EDGES:-131072000}
	echo "bench-graph-analytics: generating ga_thesis: $te edges over ids in [0, 2^31 - 1)"
	psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE ga_thesis AS
SELECT s AS source, (s + 1 + floor(random() * 2147483646)::bigint) % 2147483647 AS target
FROM (SELECT floor(random() * 2147483647)::bigint AS s FROM generate_series(1, $te)) r;
VACUUM ANALYZE ga_thesis;
SQL
	restart_server
	measure thesis mis pgxxl external "${THESIS_MEM:-512MB}" "SELECT count(*) FROM mis_x" \
		"CREATE TEMP TABLE mis_x AS SELECT * FROM xxl.maximal_independent_set('ga_thesis')"
	fresh ga_thesis
fi

# --- the table ----------------------------------------------------------------------

echo
awk -F, '
NR == 1 { next }
{
	key = $1 "," $2
	if ($3 != "pgxxl") { peer[key] = $6; peerans[key] = $11; peertool[key] = $3; peeriter[key] = $12; next }
	rows[++nr] = $0
}
END {
	printf "%-6s %-15s %-9s %-8s %9s %9s %7s %8s %9s %-9s %s\n", "graph", "function", "variant", "memory", "peer s", "pgxxl s", "ratio",
		"VmHWM MB", "spill MB", "path", "answers (peer | pgxxl)"
	for (i = 1; i <= nr; i++) {
		split(rows[i], f, ",")
		key = f[1] "," f[2]
		p = (key in peer) ? peer[key] : ""
		if (f[2] == "node_triangles") p = peer[f[1] ",triangles"]
		ratio = (p != "" && p > 0) ? sprintf("%.3f", f[6] / p) : "-"
		printf "%-6s %-15s %-9s %-8s %9s %9s %7s %8.0f %9.1f %-9s %s | %s\n", f[1], f[2], f[4], f[5], (p == "" ? "-" : p), f[6], ratio,
			f[7] / 1024, f[9] / 1048576, f[8], (key in peerans ? peerans[key] : "-"), f[11]
		if (f[2] == "pagerank" && f[12] != "" && p != "")
			printf "%-6s %-15s %-9s %-8s %9.3f %9.3f %7.3f  (seconds per iteration: SQL %d, pgxxl %d iterations)\n", "", "", "", "",
				p / peeriter[key], f[6] / f[12], (f[6] / f[12]) / (p / peeriter[key]), peeriter[key], f[12]
	}
}' "$CSV" | tee "$OUT/analytics.txt"
awk -F, -v te="${THESIS_EDGES:-131072000}" '$1 == "thesis" && $2 == "mis" {
	printf "\nthesis MIS family, %d edges at %s: %.1f s, %.2f M edges/s; STXXL pipelined (2006): 228 s on 1 disk, 208 s on 4 = %.2f / %.2f M edges/s (x %.2f / %.2f)\n",
		te, $5, $6, te / $6 / 1e6, te / 228 / 1e6, te / 208 / 1e6, 228 / $6, 208 / $6
}' "$CSV" | tee -a "$OUT/analytics.txt"

# chart: per function and size, peer / pgxxl in memory / pgxxl external
awk -F, 'NR > 1 {
	key = $1 " " $2
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	if ($3 != "pgxxl") peer[key] = $6
	else if ($4 == "memory") mem[key] = $6
	else ext[key] = $6
}
END { for (i = 1; i <= n; i++) { k = order[i]; printf "\"%s\" %s %s %s\n", k, (k in peer ? peer[k] : "NaN"),
	(k in mem ? mem[k] : "NaN"), (k in ext ? ext[k] : "NaN") } }' "$CSV" >"$DAT"
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'" bench/plot_graph_analytics.gp 2>>"$LOG" &&
		echo "bench-graph-analytics: chart $PNG"
fi
