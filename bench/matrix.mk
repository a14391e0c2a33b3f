# bench/matrix.mk — the matrix benchmark: xxl.matmul against SQL's join +
# GROUP BY on a sparse power-law Aᵀ·A and a dense A·A, in one run, on a
# throwaway server.  Included by bench/bench.mk.
#
#   make bench-matrix                                   # from the repository root
#   make -f bench/bench.mk bench-matrix MATRIX_NNZ=1000000
#
# Output: a side-by-side table (time, ratio, spill, peak backend memory,
# GFLOP/s) and bench/out/matrix.{csv,dat,log,png}.  Documented in
# docs/matrix.md and in the header of bench/run_matrix.sh.

MATRIX_N ?= 1000000
MATRIX_NNZ ?= 10000000
MATRIX_DENSE ?= 4000

.PHONY: bench-matrix

bench: bench-matrix

bench-matrix:
	@N="$(MATRIX_N)" NNZ="$(MATRIX_NNZ)" DENSE="$(MATRIX_DENSE)" bash bench/run_matrix.sh
