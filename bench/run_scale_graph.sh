#!/usr/bin/env bash
# run_scale_graph.sh — every graph operator on one random graph at budgets
# from what holds it in memory down to 1MB, in one run on one server: the
# graph part of `make bench-scale` (issue 46: every point completes, the cost
# grows smoothly below "fits", I/O a small multiple of the edges).
#
# Table edges: EDGES (5M) random edges over NODES (1M) ids, with ids and
# costs.  Operators: connected components, spanning forest, minimum spanning
# forest, BFS and shortest paths (undirected, from one source), triangle
# count, maximal independent set, coloring, PageRank; each at every budget of
# MEMS in a fresh connection, its answer (a count) compared across budgets.
# From xxl.last_stats(): total time, path, peak memory, bytes written.
#
# GRAPH=grid takes a SIDE x SIDE grid (2000: 4M nodes, 8M edges, ids in
# row order, costs 1..9) instead, searched from its corner: the shape whose
# waves and bands reward locality, as road networks do.
#
# Output: a table per operator (time, against the largest budget's, path,
# MB written, written / edge bytes (16 per edge), peak) and
# bench/out/scale_graph.{csv,png,log} (scale_graph_grid.* for the grid).
#
# Environment: EDGES, NODES, MEMS ("512MB 128MB 64MB 32MB 16MB 8MB 4MB 2MB
# 1MB"), OPS (all), SEED, GRAPH (random), SIDE, KEEP_CLUSTER=1.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
require_root "$@"
cd "$REPO"

EDGES=${EDGES:-5000000}
NODES=${NODES:-1000000}
MEMS=${MEMS:-512MB 128MB 64MB 32MB 16MB 8MB 4MB 2MB 1MB}
OPS=${OPS:-cc sf msf bfs sssp triangles mis coloring pagerank}
SEED=${SEED:-0.42}
GRAPH=${GRAPH:-random}
SIDE=${SIDE:-2000}
OUT=bench/out
NAME=scale_graph
if [ "$GRAPH" = grid ]; then NAME=scale_graph_grid; fi
CSV=$OUT/$NAME.csv
LOG=$OUT/$NAME.log
PNG=$OUT/$NAME.png
mkdir -p "$OUT"
: >"$LOG"

echo "bench-scale (graph): build and install pgxxl"
build_and_install >>"$LOG" 2>&1 || { echo "bench-scale: build failed, see $LOG" >&2; exit 1; }
start_bench_server bench-scale-graph "shared_preload_libraries = 'pgxxl'"

psql_() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "CREATE EXTENSION pgxxl" >>"$LOG" 2>&1
if [ "$GRAPH" = grid ]; then
	EDGES=$((2 * SIDE * (SIDE - 1)))
	NODES=$((SIDE * SIDE))
	echo "bench-scale (graph): $(nproc) cores, load:$(uptime | sed 's/.*load average//'); generating a $SIDE x $SIDE grid"
	psql_ >>"$LOG" 2>&1 <<SQL
CREATE UNLOGGED TABLE edges AS
SELECT (2 * (r * $SIDE + c) + k)::bigint AS id, (r * $SIDE + c)::bigint AS source,
	CASE k WHEN 0 THEN r * $SIDE + c + 1 ELSE (r + 1) * $SIDE + c END::bigint AS target,
	(1 + (r * 7 + c * 13 + k) % 9)::float8 AS cost
FROM generate_series(0, $SIDE - 1) r, generate_series(0, $SIDE - 1) c, generate_series(0, 1) k
WHERE (k = 0 AND c < $SIDE - 1) OR (k = 1 AND r < $SIDE - 1);
VACUUM ANALYZE edges;
SQL
	SRC=0
else
	echo "bench-scale (graph): $(nproc) cores, load:$(uptime | sed 's/.*load average//'); generating $EDGES edges over $NODES ids"
	psql_ >>"$LOG" 2>&1 <<SQL
SELECT setseed($SEED);
CREATE UNLOGGED TABLE edges AS
SELECT g::bigint AS id, (random() * $NODES)::bigint AS source, (random() * $NODES)::bigint AS target,
	1 + floor(random() * 9) AS cost
FROM generate_series(1, $EDGES) g;
VACUUM ANALYZE edges;
SQL
	SRC=$(psql_ -c "SELECT source FROM edges ORDER BY id LIMIT 1")
fi

query() {
	case $1 in
	cc) echo "SELECT count(DISTINCT component) FROM xxl.connected_components('edges')" ;;
	sf) echo "SELECT count(*) FROM xxl.spanning_forest('edges')" ;;
	msf) echo "SELECT count(*), sum(cost) FROM xxl.minimum_spanning_forest('edges')" ;;
	bfs) echo "SELECT count(*), sum(depth) FROM xxl.bfs('edges', $SRC, false)" ;;
	sssp) echo "SELECT count(*), sum(distance) FROM xxl.shortest_paths('edges', $SRC, false)" ;;
	triangles) echo "SELECT xxl.triangle_count('edges')" ;;
	mis) echo "SELECT count(*) FROM xxl.maximal_independent_set('edges')" ;;
	coloring) echo "SELECT count(DISTINCT color) FROM xxl.coloring('edges')" ;;
	pagerank) echo "SELECT count(*), round(sum(rank)::numeric, 6) FROM xxl.pagerank('edges')" ;;
	esac
}

echo "op,mem,mb,ms,path,peak,written,answer" >"$CSV"
for op in $OPS; do
	for mem in $MEMS; do
		out=$(psql_ 2>&1 <<SQL
SET xxl.memory = '$mem';
\\echo ANSWER
$(query "$op");
SELECT concat_ws(',', round(total_ms), details->>'path', memory_peak,
	(SELECT sum(b) FROM unnest(bytes_written) b)) FROM xxl.last_stats();
SQL
		) || { printf '%s\n' "$out" >>"$LOG"; echo "bench-scale: $op at $mem failed; see $LOG" >&2; exit 1; }
		printf '== %s %s\n%s\n' "$op" "$mem" "$out" >>"$LOG"
		answer=$(printf '%s\n' "$out" | sed -n '/^ANSWER$/{n;p;q}' | tr '|,' '  ')
		stats=$(printf '%s\n' "$out" | tail -1)
		mb=$(echo "$mem" | sed 's/GB/*1024/; s/MB//' | bc)
		echo "$op,$mem,$mb,$stats,$answer" >>"$CSV"
	done
	n=$(awk -F, -v o="$op" '$1 == o {print $8}' "$CSV" | sort -u | wc -l)
	[ "$n" = 1 ] || { echo "bench-scale: $op answers differ between budgets; see $CSV" >&2; exit 1; }
done

EDGE_MB=$(echo "$EDGES * 16 / 1048576" | bc -l)
printf '\n%s %s edges over %s ids (%.0f MB as 16-byte pairs); time against the first budget\n' \
	"$EDGES" "$GRAPH" "$NODES" "$EDGE_MB"
for op in $OPS; do
	printf '\n%s\n%-6s %9s %8s %-13s %10s %9s %8s\n' "$op" budget "s" "/first" path "MB written" "wr/edges" "peak kB"
	awk -F, -v o="$op" -v e="$EDGE_MB" '$1 == o {
		if (first == "") first = $4;
		printf "%-6s %9.2f %8.2f %-13s %10.0f %9.1f %8.0f\n", $2, $4 / 1000, $4 / first, $5,
			$7 / 1048576, $7 / 1048576 / e, $6 / 1024 }' "$CSV"
done

if command -v gnuplot >/dev/null; then
	gnuplot -e "csv='$CSV'; png='$PNG'; ops='$OPS'; title='$EDGES $GRAPH edges over $NODES ids'" \
		bench/plot_scale_graph.gp >>"$LOG" 2>&1 && echo "bench-scale (graph): chart $PNG"
fi
echo "bench-scale (graph): $CSV, $LOG"
