# bench/graph.mk — the graph benchmark: pgxxl's connected components,
# spanning forest and minimum spanning forest against pgRouting 3.4
# (pgr_connectedComponents, pgr_kruskal) on random graphs, in one run, on a
# throwaway server.  Included by bench/bench.mk.
#
#   make bench-graph                                   # from the repository root
#   make -f bench/bench.mk bench-graph GRAPH_SIZES=small BIG_PGR=1
#
# Output: a side-by-side table (time, ratio, peak backend memory, spill
# I/O) and bench/out/graph.{csv,log,dat,png}.  Documented in docs/graph.md
# ("Benchmark") and in the header of bench/run_graph.sh.

GRAPH_SIZES ?= small big
GRAPH_MEM ?= 256MB
BIG_PGR ?= 0
DIJKSTRA_PAIRS ?= 20
GRAPH_OMP_WAIT ?= passive

.PHONY: bench-graph bench-graph-analytics

bench: bench-graph

# the components, forests and paths, then the analytics (triangles, coloring, MIS, PageRank)
bench-graph:
	@GRAPH_SIZES="$(GRAPH_SIZES)" GRAPH_MEM="$(GRAPH_MEM)" BIG_PGR="$(BIG_PGR)" \
		GRAPH_OMP_WAIT="$(GRAPH_OMP_WAIT)" DIJKSTRA_PAIRS="$(DIJKSTRA_PAIRS)" bash bench/run_graph.sh
	@ANALYTICS_SIZES="$(GRAPH_SIZES)" BIG_PGR="$(BIG_PGR)" bash bench/run_graph_analytics.sh

# the analytics alone: make bench-graph-analytics GRAPH_SIZES=small
bench-graph-analytics:
	@ANALYTICS_SIZES="$(GRAPH_SIZES)" BIG_PGR="$(BIG_PGR)" bash bench/run_graph_analytics.sh
