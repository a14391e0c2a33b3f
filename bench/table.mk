# bench/table.mk — the table access method benchmark: an xxl table against a
# heap table holding the same rows, in one run, on a throwaway server.
# Included by bench/bench.mk.
#
#   make bench-table                          # from the repository root
#   make -f bench/bench.mk bench-table TABLE_ROWS=10000000
#
# Output: a side-by-side table (time, ratio, size) and
# bench/out/table.{csv,log,dat,png}.  Documented in docs/table.md.

TABLE_ROWS ?= 50000000
TABLE_EDGES ?= 5000000
TABLE_MEM ?= 256MB

.PHONY: bench-table bench-table-merge

bench: bench-table

bench-table:
	@TABLE_ROWS="$(TABLE_ROWS)" TABLE_EDGES="$(TABLE_EDGES)" TABLE_MEM="$(TABLE_MEM)" \
		bash bench/run_table.sh

# one row per statement, then VACUUM's merge (bench/run_table_merge.sh)
bench: bench-table-merge

bench-table-merge:
	@bash bench/run_table_merge.sh
