#!/usr/bin/env bash
# run_graph.sh — drives the graph benchmark: pgxxl's graph functions against
# pgRouting 3.4 on the same random graphs, in one run, on a throwaway server.
#
# For each graph size (GRAPH_SIZES, default "small big": 1M nodes / 5M edges
# and 10M nodes / 50M edges, random source and target in 1..n, random cost,
# sequential id, an UNLOGGED table, vacuumed before the runs) it measures,
# each in a fresh connection:
#   connected components     pgr_connectedComponents | xxl.connected_components
#   minimum spanning forest  pgr_kruskal             | xxl.minimum_spanning_forest
#   spanning forest          (no pgRouting function) | xxl.spanning_forest
#   shortest paths from 1    pgr_drivingDistance     | xxl.shortest_paths (directed, undirected)
#   BFS from 1               pgr_breadthFirstSearch  | xxl.bfs
#   DIJKSTRA_PAIRS (20) one-to-one paths  pgr_dijkstra | xxl.dijkstra
# Every measured statement materializes its result the same way
# (CREATE UNLOGGED TABLE ... AS SELECT * FROM f(...)), so both sides pay the
# same for their rows.  pgxxl reads the edges by table name (a direct heap
# scan) and gets xxl.memory = GRAPH_MEM (default 256MB); extra pgxxl rows
# show the query form of the edges (SPI), the _into form (straight into a
# table) and the fully external path (xxl.memory = EXT_MEM_<size>).
# pgRouting gets the edges SQL it needs; on the big graph it needs more than
# 15 GB, so it runs there only with BIG_PGR=1 (and a PGR_TIMEOUT), and
# otherwise is reported as skipped.
#
# The server restarts after each graph is generated, so that shared_buffers
# start empty (a backend's VmHWM counts the shared pages it touches).
# Reported per run: time (server clock around the statement), peak backend
# memory (VmHWM of the backend, read right after the statement) and how
# much of it is shared buffers the backend mapped (RssShmem then: they
# count once touched, and how many a run touches depends on what the runs
# before it left in shared_buffers; the limit is checked without them), and for
# pgxxl the path, spill bytes read and written and the budget's peak, from
# xxl.last_stats().  Then the answers are compared (untimed): the same
# components node by node, the same minimum spanning forest edge by edge
# (costs are random doubles, so it is unique), equal weights, and
# nodes - components forest edges.  A failed check fails the benchmark.
#
# Files: bench/out/graph.csv (every run), graph.dat + graph.png (chart:
# time and peak memory per function and size), graph.log (psql output).
#
# Then a large-diameter graph: a GRID_SIDE x GRID_SIDE grid (1000) with
# scattered ids and costs 1..100, undirected: BFS (pgRouting against pgxxl
# in memory and external as MR and as MM, xxl.bfs_algorithm) and shortest
# paths (in memory, external Dijkstra and MO, xxl.sssp_algorithm); the
# random graphs' external BFS and shortest paths also run as MM and MO
# (variants external-mm, external-mo).
#
# Environment: GRAPH_SIZES, GRAPH_MEM, EXT_MEM_small (16MB), EXT_MEM_big
# (64MB), GRID_SIDE (1000; 0 skips the grid), BIG_PGR (0), PGR_TIMEOUT (seconds, 3600), SEED (0.42),
# KEEP_CLUSTER=1 (leave the server's directory, with the graphs, behind).
# GRAPH_OMP_WAIT (passive): the OpenMP wait policy of the server, which
# pgxxl's threads inherit: passive (threads sleep when idle), active, or
# default (leave OMP_WAIT_POLICY unset: libgomp spins for a while before it
# sleeps, which costs pgxxl up to 2.5x when other processes compete for the
# cores; see docs/graph.md).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

GRAPH_SIZES=${GRAPH_SIZES:-small big}
GRAPH_OMP_WAIT=${GRAPH_OMP_WAIT:-passive}
case $GRAPH_OMP_WAIT in
	default) unset OMP_WAIT_POLICY ;;
	passive | active) export OMP_WAIT_POLICY=$GRAPH_OMP_WAIT ;;
	*) echo "bench-graph: GRAPH_OMP_WAIT must be passive, active or default" >&2; exit 2 ;;
esac
GRAPH_MEM=${GRAPH_MEM:-256MB}
EXT_MEM_small=${EXT_MEM_small:-16MB}
GRID_SIDE=${GRID_SIDE:-1000}
EXT_MEM_big=${EXT_MEM_big:-64MB}
EXT_MEM_tiny=${EXT_MEM_tiny:-1MB}
BIG_PGR=${BIG_PGR:-0}
PGR_TIMEOUT=${PGR_TIMEOUT:-3600}
DIJKSTRA_PAIRS=${DIJKSTRA_PAIRS:-20}
SEED=${SEED:-0.42}
OUT=bench/out
CSV=$OUT/graph.csv
DAT=$OUT/graph.dat
LOG=$OUT/graph.log
PNG=$OUT/graph.png
mkdir -p "$OUT"
: >"$LOG"


# --- what the comparison needs ------------------------------------------------

echo "bench-graph: build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-graph: build failed, see $LOG" >&2; exit 1; }
install_missing bench-graph postgresql-15-pgrouting postgresql-15-postgis-3 gnuplot-nox

# --- a throwaway server ---------------------------------------------------------

start_bench_server bench-graph

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" -c "CREATE EXTENSION pgrouting CASCADE" >>"$LOG" 2>&1
echo "bench-graph: $(psql_ -c 'SELECT xxl.version()'), pgRouting $(psql_ -c 'SELECT pgr_version()'), $(nproc) cores"
echo "bench-graph: xxl.memory = $GRAPH_MEM (external rows: small $EXT_MEM_small, big $EXT_MEM_big); spill and tables in $WORK"
omp=$(tr '\0' '\n' <"/proc/$(head -n 1 "$CLUSTER_DIR/data/postmaster.pid")/environ" | sed -n 's/^OMP_WAIT_POLICY=//p')
echo "bench-graph: load at start:$(uptime | sed 's/.*load average//'); the server's OMP_WAIT_POLICY: ${omp:-unset, libgomp default: spin, then sleep}"

# --- measuring ----------------------------------------------------------------------

echo "size,function,tool,variant,memory,status,secs,vmhwm_kb,path,bytes_read,bytes_written,budget_peak,input_ms,merge_ms,output_ms,shmem_kb" >"$CSV"

# measure_pgr SIZE FUNCTION TIMEOUT STATEMENT
# One fresh connection: the statement, the server-side time around it and
# the backend's VmHWM right after it.  Appends a CSV row.
measure_pgr() {
	local size=$1 fn=$2 timeout=$3 stmt=$4
	local out rc=0 line secs= vm= status=ok
	echo "== $size $fn pgrouting: $stmt" >>"$LOG"
	out=$(psql_ 2>&1 <<SQL
SET statement_timeout = '${timeout}s';
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s shmem_kb=%s vmhwm_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1],
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]);
SQL
	) || rc=$?
	printf '%s\n' "$out" >>"$LOG"
	if [ $rc -ne 0 ]; then
		status=failed
		echo "   pgRouting $fn failed: $(printf '%s\n' "$out" | grep -m1 -E 'ERROR|FATAL|terminated|closed' || echo "exit $rc")" | tee -a "$LOG"
	else
		line=$(printf '%s\n' "$out" | grep '^RESULT ')
		secs=${line#*secs=}; secs=${secs%% *}
		vm=${line##*vmhwm_kb=}
		sh=${line#*shmem_kb=}; sh=${sh%% *}
	fi
	echo "$size,$fn,pgrouting,srf,-,$status,$secs,$vm,,,,,,,,${sh:-}" >>"$CSV"
}

# The same for pgxxl, with its statistics from the measured session.
measure_xxl() {
	local size=$1 fn=$2 variant=$3 mem=$4 stmt=$5
	local out rc=0 status=ok line
	echo "== $size $fn pgxxl $variant (xxl.memory=$mem): $stmt" >>"$LOG"
	out=$(psql_ 2>&1 <<SQL
SET xxl.memory = '$mem';
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$stmt;
SELECT format('RESULT secs=%s shmem_kb=%s vmhwm_kb=%s', round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 3),
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'RssShmem:\s+(\d+) kB'))[1],
	(regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]);
SELECT format('STATS path=%s read=%s written=%s peak=%s input_ms=%s merge_ms=%s output_ms=%s',
	details->>'path', (SELECT sum(b) FROM unnest(bytes_read) b), (SELECT sum(b) FROM unnest(bytes_written) b),
	memory_peak, round(input_ms), round(merge_ms), round(output_ms))
FROM xxl.last_stats();
SQL
	) || rc=$?
	printf '%s\n' "$out" >>"$LOG"
	if [ $rc -ne 0 ]; then
		echo "bench-graph: pgxxl $fn ($variant) failed: $(printf '%s\n' "$out" | grep -m1 -E 'ERROR|FATAL' || echo "exit $rc"); see $LOG" >&2
		exit 1
	fi
	line=$(printf '%s\n' "$out" | grep '^RESULT ')
	local secs=${line#*secs=}; secs=${secs%% *}
	local vm=${line##*vmhwm_kb=}
	local sh=${line#*shmem_kb=}; sh=${sh%% *}
	line=$(printf '%s\n' "$out" | grep '^STATS ')
	kv() { printf '%s\n' "$line" | sed -nE "s/.* $1=([^ ]*).*/\1/p"; }
	echo "$size,$fn,pgxxl,$variant,$mem,$status,$secs,$vm,$(kv path),$(kv read),$(kv written),$(kv peak),$(kv input_ms),$(kv merge_ms),$(kv output_ms),$sh" >>"$CSV"
}

fresh() { psql_ -c "DROP TABLE IF EXISTS $*" >>"$LOG" 2>&1; }

# SQL giving one row (problem) when the row sets of a and b differ
differ() {
	echo "SELECT '$3' AS problem WHERE EXISTS ((SELECT * FROM $1 EXCEPT ALL SELECT * FROM $2)
		UNION ALL (SELECT * FROM $2 EXCEPT ALL SELECT * FROM $1))"
}

for size in $GRAPH_SIZES; do
	n=$(graph_nodes_of "$size"); m=$(graph_edges_of "$size"); g=g_$size
	[ -n "$n" ] || { echo "bench-graph: unknown size $size (small, big)" >&2; exit 2; }
	echo "bench-graph: generating $g: $n nodes, $m edges"
	t0=$(date +%s)
	psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE $g AS
SELECT i::bigint AS id, (1 + floor(random() * $n))::bigint AS source,
	(1 + floor(random() * $n))::bigint AS target, random() AS cost
FROM generate_series(1, $m) i;
VACUUM (FREEZE, ANALYZE) $g;
CHECKPOINT;
SQL
	restart_server
	echo "bench-graph: $g ready in $(( $(date +%s) - t0 )) s, $(psql_ -c "SELECT pg_size_pretty(pg_relation_size('$g'))")"
	edges_sql="SELECT id, source, target, cost FROM $g"
	ext=EXT_MEM_$size; ext=${!ext}
	run_pgr=1
	[ "$size" = big ] && [ "$BIG_PGR" != 1 ] && run_pgr=0

	# connected components
	fresh "r_pgr_cc, r_xxl_cc, r_xxlq_cc, r_xxli_cc, r_xxle_cc"
	if [ $run_pgr = 1 ]; then
		echo "bench-graph: $size: pgr_connectedComponents"
		measure_pgr "$size" cc "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_cc AS SELECT * FROM pgr_connectedComponents('$edges_sql')"
	else
		echo "$size,cc,pgrouting,srf,-,skipped,,,,,,,,,," >>"$CSV"
	fi
	echo "bench-graph: $size: xxl.connected_components"
	measure_xxl "$size" cc srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_cc AS SELECT * FROM xxl.connected_components('$g')"
	measure_xxl "$size" cc query "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxlq_cc AS SELECT * FROM xxl.connected_components('$edges_sql')"
	measure_xxl "$size" cc into "$GRAPH_MEM" "SELECT xxl.connected_components_into('$g', 'r_xxli_cc')"
	measure_xxl "$size" cc external "$ext" "CREATE UNLOGGED TABLE r_xxle_cc AS SELECT * FROM xxl.connected_components('$g')"

	# minimum spanning forest
	fresh "r_pgr_msf, r_xxl_msf, r_xxli_msf, r_xxle_msf"
	if [ $run_pgr = 1 ]; then
		echo "bench-graph: $size: pgr_kruskal"
		measure_pgr "$size" msf "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_msf AS SELECT * FROM pgr_kruskal('$edges_sql')"
	else
		echo "$size,msf,pgrouting,srf,-,skipped,,,,,,,,,," >>"$CSV"
	fi
	echo "bench-graph: $size: xxl.minimum_spanning_forest"
	measure_xxl "$size" msf srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_msf AS SELECT * FROM xxl.minimum_spanning_forest('$g')"
	measure_xxl "$size" msf into "$GRAPH_MEM" "SELECT xxl.minimum_spanning_forest_into('$g', 'r_xxli_msf')"
	measure_xxl "$size" msf external "$ext" "CREATE UNLOGGED TABLE r_xxle_msf AS SELECT * FROM xxl.minimum_spanning_forest('$g')"

	# spanning forest (pgRouting has no such function)
	fresh "r_xxl_sf, r_xxli_sf, r_xxle_sf"
	echo "bench-graph: $size: xxl.spanning_forest"
	echo "$size,sf,pgrouting,srf,-,none,,,,,,,,,," >>"$CSV"
	measure_xxl "$size" sf srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_sf AS SELECT * FROM xxl.spanning_forest('$g')"
	measure_xxl "$size" sf into "$GRAPH_MEM" "SELECT xxl.spanning_forest_into('$g', 'r_xxli_sf')"
	measure_xxl "$size" sf external "$ext" "CREATE UNLOGGED TABLE r_xxle_sf AS SELECT * FROM xxl.spanning_forest('$g')"

	# shortest paths and BFS from node 1 (the edges are one-way: no reverse_cost)
	fresh "r_pgr_sp, r_xxl_sp, r_xxle_sp, r_pgr_spu, r_xxl_spu, r_pgr_bfs, r_xxl_bfs, r_xxle_bfs, r_xxlm_bfs, r_xxlo_sp, r_pgr_dij, r_xxl_dij"
	pairs="SELECT p, 1 + (p * 7919) % $n AS s, 1 + (p * 104729) % $n AS t FROM generate_series(1, $DIJKSTRA_PAIRS) p"
	if [ $run_pgr = 1 ]; then
		echo "bench-graph: $size: pgr_drivingDistance (directed, undirected), pgr_breadthFirstSearch, pgr_dijkstra x $DIJKSTRA_PAIRS"
		measure_pgr "$size" sssp "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_sp AS SELECT * FROM pgr_drivingDistance('$edges_sql', 1, 1e15)"
		measure_pgr "$size" sssp_undirected "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_spu AS SELECT * FROM pgr_drivingDistance('$edges_sql', 1, 1e15, false)"
		measure_pgr "$size" bfs "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_bfs AS SELECT * FROM pgr_breadthFirstSearch('$edges_sql', 1)"
		measure_pgr "$size" dijkstra "$PGR_TIMEOUT" \
			"CREATE UNLOGGED TABLE r_pgr_dij AS SELECT q.p, d.* FROM ($pairs) q, LATERAL pgr_dijkstra('$edges_sql', q.s, q.t) d"
	else
		for f in sssp sssp_undirected bfs dijkstra; do echo "$size,$f,pgrouting,srf,-,skipped,,,,,,,,,," >>"$CSV"; done
	fi
	echo "bench-graph: $size: xxl.shortest_paths, xxl.bfs, xxl.dijkstra"
	# (the in-memory rows first, as pgRouting's run one after another: the
	# external rows' spill I/O would push the edges out of the page cache)
	measure_xxl "$size" sssp srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_sp AS SELECT * FROM xxl.shortest_paths('$g', 1)"
	measure_xxl "$size" sssp_undirected srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_spu AS SELECT * FROM xxl.shortest_paths('$g', 1, false)"
	measure_xxl "$size" bfs srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_bfs AS SELECT * FROM xxl.bfs('$g', 1)"
	measure_xxl "$size" dijkstra srf "$GRAPH_MEM" \
		"CREATE UNLOGGED TABLE r_xxl_dij AS SELECT q.p, d.* FROM ($pairs) q, LATERAL xxl.dijkstra('$g', q.s, q.t) d"
	measure_xxl "$size" sssp external "$ext" "CREATE UNLOGGED TABLE r_xxle_sp AS SELECT * FROM xxl.shortest_paths('$g', 1)"
	measure_xxl "$size" sssp external-mo "$ext" "SET xxl.sssp_algorithm = 'mo'; CREATE UNLOGGED TABLE r_xxlo_sp AS SELECT * FROM xxl.shortest_paths('$g', 1)"
	measure_xxl "$size" bfs external "$ext" "CREATE UNLOGGED TABLE r_xxle_bfs AS SELECT * FROM xxl.bfs('$g', 1)"
	measure_xxl "$size" bfs external-mm "$ext" "SET xxl.bfs_algorithm = 'mm'; CREATE UNLOGGED TABLE r_xxlm_bfs AS SELECT * FROM xxl.bfs('$g', 1)"
	paths_checks="$(differ '(SELECT node, distance FROM r_xxle_sp) e' '(SELECT node, distance FROM r_xxl_sp) x' 'shortest paths: external and in-memory paths differ')
		UNION ALL $(differ '(SELECT node, depth FROM r_xxle_bfs) e' '(SELECT node, depth FROM r_xxl_bfs) x' 'bfs: external and in-memory paths differ')
		UNION ALL $(differ '(SELECT node, depth FROM r_xxlm_bfs) e' '(SELECT node, depth FROM r_xxl_bfs) x' 'bfs: MM and in-memory paths differ')
		UNION ALL $(differ '(SELECT node, distance FROM r_xxlo_sp) e' '(SELECT node, distance FROM r_xxl_sp) x' 'shortest paths: MO and in-memory paths differ')"
	if [ $run_pgr = 1 ]; then
		paths_checks="$paths_checks
		UNION ALL $(differ '(SELECT node, round(agg_cost::numeric, 9) FROM r_pgr_sp) p' '(SELECT node, round(distance::numeric, 9) FROM r_xxl_sp) x' 'shortest paths: pgRouting and pgxxl differ')
		UNION ALL $(differ '(SELECT node, round(agg_cost::numeric, 9) FROM r_pgr_spu) p' '(SELECT node, round(distance::numeric, 9) FROM r_xxl_spu) x' 'undirected shortest paths: pgRouting and pgxxl differ')
		UNION ALL $(differ '(SELECT node, depth FROM r_pgr_bfs) p' '(SELECT node, depth FROM r_xxl_bfs) x' 'bfs: pgRouting and pgxxl differ')
		UNION ALL $(differ '(SELECT p, round(max(agg_cost)::numeric, 9) FROM r_pgr_dij GROUP BY p) p' '(SELECT p, round(max(agg_cost)::numeric, 9) FROM r_xxl_dij GROUP BY p) x' 'dijkstra: pgRouting and pgxxl path costs differ')"
	fi

	# --- the answers, untimed -------------------------------------------------
	echo "bench-graph: $size: checking the answers"
	checks="$(differ r_xxlq_cc r_xxl_cc 'components: query form and table form differ')
		UNION ALL $(differ r_xxli_cc r_xxl_cc 'components: _into and the rows differ')
		UNION ALL $(differ r_xxle_cc r_xxl_cc 'components: external and semi-external paths differ')
		UNION ALL $(differ r_xxli_msf r_xxl_msf 'minimum spanning forest: _into and the rows differ')
		UNION ALL $(differ r_xxle_msf r_xxl_msf 'minimum spanning forest: external and semi-external paths differ')
		UNION ALL SELECT t || ' has ' || k || ' edges, not nodes - components = ' || (n - c)
			FROM f, (VALUES ('r_xxl_msf', (SELECT count(*) FROM r_xxl_msf)), ('r_xxl_sf', (SELECT count(*) FROM r_xxl_sf)),
				('r_xxli_sf', (SELECT count(*) FROM r_xxli_sf)), ('r_xxle_sf', (SELECT count(*) FROM r_xxle_sf))) v(t, k)
			WHERE k <> n - c
		UNION ALL SELECT 'the external spanning forest does not connect the components'
			WHERE EXISTS (SELECT * FROM xxl.connected_components('r_xxle_sf') EXCEPT ALL TABLE r_xxl_cc)
		UNION ALL $paths_checks"
	with_pgr=""
	if psql_ -c "SELECT 1 FROM r_pgr_cc LIMIT 1" >/dev/null 2>&1 && psql_ -c "SELECT 1 FROM r_pgr_msf LIMIT 1" >/dev/null 2>&1; then
		with_pgr=", and with pgRouting's"
		checks="$checks
		UNION ALL $(differ '(SELECT node, component FROM r_pgr_cc) p' r_xxl_cc 'components: pgRouting and pgxxl differ')
		UNION ALL $(differ '(SELECT edge FROM r_pgr_msf) p' '(SELECT id FROM r_xxl_msf) x' 'minimum spanning forest: pgRouting and pgxxl differ')
		UNION ALL SELECT format('minimum spanning forest: pgRouting weight %s, pgxxl %s', a, b)
			FROM (SELECT (SELECT sum(cost) FROM r_pgr_msf) a, (SELECT sum(cost) FROM r_xxl_msf) b) w
			WHERE abs(a - b) > 1e-9 * greatest(abs(a), 1)"
	fi
	summary=$(psql_ 2>>"$LOG" <<SQL
SET xxl.memory = '$GRAPH_MEM';
CREATE TEMP TABLE f AS SELECT (SELECT count(*) FROM r_xxl_cc) AS n, (SELECT count(DISTINCT component) FROM r_xxl_cc) AS c;
SELECT format('SUMMARY %s nodes, %s components, minimum spanning forest of %s edges, weight %s', n, c,
	(SELECT count(*) FROM r_xxl_msf), (SELECT round(sum(cost)::numeric, 6) FROM r_xxl_msf)) FROM f;
SELECT 'CHECK ' || problem FROM ($checks) p;
SQL
	) || { echo "bench-graph: the checks could not run, see $LOG" >&2; exit 1; }
	printf '%s\n' "$summary" >>"$LOG"
	echo "   $(printf '%s\n' "$summary" | sed -n 's/^SUMMARY //p')"
	if printf '%s\n' "$summary" | grep -q '^CHECK '; then
		printf '%s\n' "$summary" | sed -n 's/^CHECK /   FAILED: /p' >&2
		exit 1
	fi
	echo "   answers agree: pgxxl's variants with each other$with_pgr"
	[ "${KEEP_CLUSTER:-0}" = 1 ] || fresh "$g, r_pgr_cc, r_xxl_cc, r_xxlq_cc, r_xxli_cc, r_xxle_cc, r_pgr_msf, r_xxl_msf, r_xxli_msf, r_xxle_msf, r_xxl_sf, r_xxli_sf, r_xxle_sf, r_pgr_sp, r_xxl_sp, r_xxle_sp, r_pgr_spu, r_xxl_spu, r_pgr_bfs, r_xxl_bfs, r_xxle_bfs, r_xxlm_bfs, r_xxlo_sp, r_pgr_dij, r_xxl_dij"
done

# --- a large-diameter graph: BFS on a grid with scattered ids --------------------------
# GRID_SIDE x GRID_SIDE nodes (0: skipped), ids scattered so that id order
# is no locality; undirected; pgr_breadthFirstSearch against xxl.bfs in
# memory and external as MR and MM (at EXT_MEM_small).
if [ "$GRID_SIDE" -gt 0 ]; then
	echo "bench-graph: generating grid_bench: $GRID_SIDE x $GRID_SIDE, ids scattered"
	psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
DROP TABLE IF EXISTS grid_bench;
CREATE UNLOGGED TABLE grid_bench AS
SELECT row_number() OVER ()::bigint AS id, (s * 2654435761) % 4294967311 AS source,
	(t * 2654435761) % 4294967311 AS target, w AS cost, w AS reverse_cost
FROM (SELECT *, (1 + floor(random() * 100))::float8 AS w FROM (SELECT r * $GRID_SIDE + q AS s, r * $GRID_SIDE + q + 1 AS t
	  FROM generate_series(0, $GRID_SIDE - 1) r, generate_series(0, $GRID_SIDE - 2) q
	  UNION ALL
	  SELECT r * $GRID_SIDE + q, (r + 1) * $GRID_SIDE + q
	  FROM generate_series(0, $GRID_SIDE - 2) r, generate_series(0, $GRID_SIDE - 1) q) e) w;
VACUUM (FREEZE, ANALYZE) grid_bench;
CHECKPOINT;
SQL
	restart_server
	gsrc=$(psql_ -c "SELECT source FROM grid_bench WHERE id = 1")
	fresh "r_pgr_gbfs, r_xxl_gbfs, r_xxle_gbfs, r_xxlm_gbfs, r_pgr_gsp, r_xxl_gsp, r_xxle_gsp, r_xxlo_gsp"
	measure_pgr grid sssp_undirected "$PGR_TIMEOUT" "CREATE UNLOGGED TABLE r_pgr_gsp AS SELECT * FROM pgr_drivingDistance('SELECT id, source, target, cost, reverse_cost FROM grid_bench', $gsrc, 1e15, false)"
	measure_xxl grid sssp_undirected srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_gsp AS SELECT * FROM xxl.shortest_paths('grid_bench', $gsrc, false)"
	measure_pgr grid bfs "$PGR_TIMEOUT" "CREATE UNLOGGED TABLE r_pgr_gbfs AS SELECT * FROM pgr_breadthFirstSearch('SELECT id, source, target, cost, reverse_cost FROM grid_bench', $gsrc, directed => false)"
	measure_xxl grid bfs srf "$GRAPH_MEM" "CREATE UNLOGGED TABLE r_xxl_gbfs AS SELECT * FROM xxl.bfs('grid_bench', $gsrc, false)"
	measure_xxl grid sssp_undirected external "$EXT_MEM_small" "CREATE UNLOGGED TABLE r_xxle_gsp AS SELECT * FROM xxl.shortest_paths('grid_bench', $gsrc, false)"
	measure_xxl grid sssp_undirected external-mo "$EXT_MEM_small" "SET xxl.sssp_algorithm = 'mo'; CREATE UNLOGGED TABLE r_xxlo_gsp AS SELECT * FROM xxl.shortest_paths('grid_bench', $gsrc, false)"
	measure_xxl grid bfs external "$EXT_MEM_small" "CREATE UNLOGGED TABLE r_xxle_gbfs AS SELECT * FROM xxl.bfs('grid_bench', $gsrc, false)"
	measure_xxl grid bfs external-mm "$EXT_MEM_small" "SET xxl.bfs_algorithm = 'mm'; CREATE UNLOGGED TABLE r_xxlm_gbfs AS SELECT * FROM xxl.bfs('grid_bench', $gsrc, false)"
	problems=$(psql_ 2>>"$LOG" <<SQL
SELECT 'CHECK ' || problem FROM ($(differ '(SELECT node, depth FROM r_pgr_gbfs) p' '(SELECT node, depth FROM r_xxl_gbfs) x' 'grid bfs: pgRouting and pgxxl differ')
	UNION ALL $(differ '(SELECT node, depth FROM r_xxle_gbfs) e' '(SELECT node, depth FROM r_xxl_gbfs) x' 'grid bfs: MR and in-memory differ')
	UNION ALL $(differ '(SELECT node, depth FROM r_xxlm_gbfs) e' '(SELECT node, depth FROM r_xxl_gbfs) x' 'grid bfs: MM and in-memory differ')
	UNION ALL $(differ '(SELECT node, agg_cost FROM r_pgr_gsp) p' '(SELECT node, distance FROM r_xxl_gsp) x' 'grid shortest paths: pgRouting and pgxxl differ')
	UNION ALL $(differ '(SELECT node, distance FROM r_xxle_gsp) e' '(SELECT node, distance FROM r_xxl_gsp) x' 'grid shortest paths: external Dijkstra and in-memory differ')
	UNION ALL $(differ '(SELECT node, distance FROM r_xxlo_gsp) e' '(SELECT node, distance FROM r_xxl_gsp) x' 'grid shortest paths: MO and in-memory differ')) p;
SQL
	) || { echo "bench-graph: the grid checks could not run, see $LOG" >&2; exit 1; }
	if [ -n "$problems" ]; then
		printf '%s
' "$problems" | sed 's/^CHECK /   FAILED: /' >&2
		exit 1
	fi
	echo "   grid answers agree: pgRouting, in memory, MR and MM; external Dijkstra and MO"
	[ "${KEEP_CLUSTER:-0}" = 1 ] || fresh "grid_bench, r_pgr_gbfs, r_xxl_gbfs, r_xxle_gbfs, r_xxlm_gbfs, r_pgr_gsp, r_xxl_gsp, r_xxle_gsp, r_xxlo_gsp"
fi

# --- report -------------------------------------------------------------------------

echo
awk -F, -v mem="$GRAPH_MEM" '
	function mb(kb) { return kb == "" ? "" : sprintf("%.0f", kb / 1024) }
	function gb(b) { return b == "" ? "" : sprintf("%.2f", b / 1073741824) }
	function budget_mb(s,    b) { b = s + 0; if (s ~ /GB$/) b *= 1024; if (s ~ /kB$/) b /= 1024; return b }
	NR == 1 { next }
	{
		key = $1 "," $2
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		if ($3 == "pgrouting") { pst[key] = $6; pt[key] = $7; pm[key] = $8; next }
		v = $4; rows[key, v] = $0; vt[key, v] = $7; vm[key, v] = $8; vs[key, v] = $6; vsh[key, v] = $16
		vio[key, v] = ($10 == "" ? "" : gb($10) "/" gb($11)); vpath[key, v] = $9; vmem[key, v] = $5
	}
	END {
		name["cc"] = "connected components"; name["msf"] = "min. spanning forest"; name["sf"] = "spanning forest"
		name["sssp"] = "shortest paths"; name["sssp_undirected"] = "shortest paths (und.)"; name["bfs"] = "bfs"
		name["dijkstra"] = "dijkstra (pairs)"
		title["tiny"] = "100k/500k"; title["small"] = "1M/5M"; title["big"] = "10M/50M"; title["grid"] = "grid"
		printf "%-8s %-21s %10s %10s %7s %9s %9s %8s %8s %-13s %s\n", "graph", "function", "pgRouting", "pgxxl", "ratio",
			"pgr peak", "xxl peak", "shared", "limit", "xxl path", "xxl spill read/written GB"
		for (i = 1; i <= nk; i++) {
			split(order[i], k, ",")
			key = order[i]
			p = (pst[key] == "ok" ? sprintf("%.2f s", pt[key]) : pst[key])
			x = (vs[key, "srf"] == "ok" ? sprintf("%.2f s", vt[key, "srf"]) : vs[key, "srf"])
			r = (pst[key] == "ok" && vs[key, "srf"] == "ok" && pt[key] > 0 ? sprintf("%.3f", vt[key, "srf"] / pt[key]) : "-")
			lim = budget_mb(vmem[key, "srf"]) + 32
			printf "%-8s %-21s %10s %10s %7s %6s MB %6s MB %5s MB %5d MB%s %-13s %s\n", title[k[1]], name[k[2]], p, x, r,
				(pm[key] == "" ? "-" : mb(pm[key])), mb(vm[key, "srf"]), mb(vsh[key, "srf"]), lim,
				((vm[key, "srf"] - vsh[key, "srf"]) / 1024 > lim ? "!" : " "), vpath[key, "srf"], vio[key, "srf"]
			split("query into external external-mm external-mo", vv, " ")
			for (j = 1; j <= 5; j++) {
				v = vv[j]
				if (!((key, v) in vt)) continue
				x = (vs[key, v] == "ok" ? sprintf("%.2f s", vt[key, v]) : vs[key, v])
				r = (pst[key] == "ok" && vs[key, v] == "ok" && pt[key] > 0 ? sprintf("%.3f", vt[key, v] / pt[key]) : "-")
				lim = budget_mb(vmem[key, v]) + 32
				printf "%-8s %-21s %10s %10s %7s %9s %6s MB %5s MB %5d MB%s %-13s %s\n", "", "  " v " (" vmem[key, v] ")", "", x, r, "",
					mb(vm[key, v]), mb(vsh[key, v]), lim, ((vm[key, v] - vsh[key, v]) / 1024 > lim ? "!" : " "),
					vpath[key, v], vio[key, v]
			}
		}
	}' "$CSV"

# chart data: one line per (size, function) with both tools' time and peak memory
awk -F, '
	function v(a, k) { return (k in a) && a[k] != "" ? a[k] : "NaN" }
	NR == 1 { next }
	{ key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
	  if ($3 == "pgrouting") { pt[key] = ($6 == "ok" ? $7 : "NaN"); pm[key] = ($6 == "ok" ? $8 / 1024 : "NaN") }
	  else if ($4 == "srf") { xt[key] = ($6 == "ok" ? $7 : "NaN"); xm[key] = ($6 == "ok" ? $8 / 1024 : "NaN"); lim[key] = $5 + 32 }
	  else if ($4 == "external") { et[key] = ($6 == "ok" ? $7 : "NaN"); em[key] = ($6 == "ok" ? $8 / 1024 : "NaN") } }
	END {
		name["cc"] = "CC"; name["msf"] = "MSF"; name["sf"] = "SF"; name["sssp"] = "SSSP"
		name["sssp_undirected"] = "SSSP-u"; name["bfs"] = "BFS"; name["dijkstra"] = "Dijkstra"; title["tiny"] = "100k/500k"; title["small"] = "1M/5M"; title["big"] = "10M/50M"; title["grid"] = "grid"
		print "# label pgr_s xxl_s xxl_ext_s pgr_mb xxl_mb xxl_ext_mb limit_mb"
		for (i = 1; i <= nk; i++) { split(order[i], k, " ")
			# a value not measured must still take its column
			o = order[i]
			printf "\"%s %s\" %s %s %s %s %s %s %s\n", name[k[2]], title[k[1]], v(pt, o), v(xt, o),
				v(et, o), v(pm, o), v(xm, o), v(em, o), v(lim, o) }
	}' "$CSV" >"$DAT"
if command -v gnuplot >/dev/null; then
	gnuplot -e "datafile='$DAT'; outfile='$PNG'; mem='$GRAPH_MEM'" bench/plot_graph.gp 2>>"$LOG" &&
		echo "chart: $PNG"
fi
echo "load at end:$(uptime | sed 's/.*load average//'); '!' marks a peak above its limit, shared buffers mapped (shared) left out"
echo "data: $CSV; log: $LOG"
awk -F, 'NR > 1 && $3 == "pgrouting" && $6 == "ok" { pt[$1 "," $2] = $7 }
	NR > 1 && $3 == "pgxxl" && $4 == "srf" && $6 == "ok" { xt[$1 "," $2] = $7 }
	END { for (k in pt) if (k in xt) { n++; s = s sprintf("%s%s %.3f", n > 1 ? ", " : "", k, xt[k] / pt[k]) }
	      print "ratio pgxxl/pgRouting (time): " (n ? s : "none measured") }' "$CSV" | sed 's/tiny,/100k\/500k /g; s/small,/1M\/5M /g; s/big,/10M\/50M /g; s/grid,/grid /g'
