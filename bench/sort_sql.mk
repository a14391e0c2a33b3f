# bench/sort_sql.mk — the SQL sort benchmark: xxl.sort / xxl.sort_into
# against ORDER BY and CREATE TABLE AS ... ORDER BY on the same table and
# budget, in one run, on a throwaway server; then ordinary sorting queries
# with xxl.sort_in_plans on and off (bench/run_sort_plans.sh, alone:
# bench-sort-plans), and sorting into a new table against DuckDB
# (bench/run_sort_duckdb.sh, alone: bench-sort-duckdb).  Included by bench/bench.mk.
#
#   make bench-sort-sql                       # from the repository root
#   make -f bench/bench.mk bench-sort-sql ROWS=5000000 MEM=64
#
# Output: a side-by-side table (time, ratios, peak backend memory, spill
# I/O) and bench/out/sort_sql.{csv,log,dat,png}.  See bench/run_sort_sql.sh.

ROWS ?= 50000000

.PHONY: bench-sort-sql bench-sort-plans bench-sort-duckdb bench-sort-shapes bench-progress

bench: bench-sort-sql

bench-sort-sql:
	@ROWS="$(ROWS)" MEM="$(MEM)" bash bench/run_sort_sql.sh
	@ROWS="$(ROWS)" MEM="$(MEM)" bash bench/run_sort_plans.sh
	@ROWS="$(ROWS)" bash bench/run_sort_duckdb.sh

bench-sort-plans:
	@ROWS="$(ROWS)" MEM="$(MEM)" bash bench/run_sort_plans.sh

# sorting into a new table against DuckDB at 16MB to 1GB (issue 50;
# bench/run_sort_duckdb.sh, DuckDB from npm for the benchmark only)
bench-sort-duckdb:
	@ROWS="$(ROWS)" bash bench/run_sort_duckdb.sh

# what the progress view costs the 50M-row sort_into (bench/run_progress.sh)
bench-progress:
	@ROWS="$(ROWS)" bash bench/run_progress.sh

# key shapes and collations (issue 45): its own sizes, see bench/run_sort_shapes.sh
bench-sort-shapes:
	@bash bench/run_sort_shapes.sh

# every operator at budgets from in memory down to 1MB (issue 46): the sort,
# the graph operators, the suffix array
.PHONY: bench-scale
bench-scale:
	@bash bench/run_scale_sort.sh
	@bash bench/run_scale_graph.sh
	@bash bench/run_scale_text.sh
