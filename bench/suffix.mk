# bench/suffix.mk — the suffix-array benchmark: xxl.suffix_array_into on
# SUFFIX_MB MiB of real text (the text files of /usr/share/doc and
# /usr/include) with xxl.memory = n/8, against libdivsufsort in RAM and a
# PL/pgSQL prefix-doubling baseline on 1 and 4 MiB, in one run, on a
# throwaway server.  Included by bench/bench.mk; see bench/README.md.
#
#   make bench-suffix                                  # from the repository root
#   make -f bench/bench.mk bench-suffix SUFFIX_MB=20 DBL_MB=1
#
# Output: a side-by-side table (s, us/byte, ratio to divsufsort, peak memory,
# I/O volume, recursion depth, I/O against [T]'s sort(30n) + scan(6n)),
# bench/out/suffix.{csv,log,dat,png}, and as the last line
# `ratio xxl/divsufsort = T.TT (time), M.MMM (peak memory; ...)`.
# run_suffix.sh installs libdivsufsort-dev and gnuplot-nox when dpkg-query
# says they are missing, and builds its two small programs itself.

SUFFIX_MB ?= 100
SUFFIX_ROOMY ?= 1GB
SUFFIX_ENGINE ?= 1
DBL_MB ?= 1 4
DBL_LIMIT ?= 300

# The LCP and repeats part (bench/run_text_lcp.sh): three corpora of
# TEXT_MB MiB (code, prose, repetitive) at n/8 against divsufsort,
# divsufsort + Kasai and a C repeat finder; alone: make bench-text-lcp.
TEXT_MB ?= 100
TEXT_KINDS ?= code prose repetitive
REPEATS_K ?= 50

.PHONY: bench-suffix bench-text-lcp

bench: bench-suffix

bench-suffix:
	@SUFFIX_MB="$(SUFFIX_MB)" SUFFIX_ROOMY="$(SUFFIX_ROOMY)" SUFFIX_ENGINE="$(SUFFIX_ENGINE)" \
		DBL_MB="$(DBL_MB)" DBL_LIMIT="$(DBL_LIMIT)" BENCH_OPT="$(BENCH_OPT)" BB=$(BB) \
		bash bench/run_suffix.sh
	@$(MAKE) --no-print-directory -f bench/bench.mk bench-text-lcp

bench-text-lcp:
	@TEXT_MB="$(TEXT_MB)" TEXT_KINDS="$(TEXT_KINDS)" REPEATS_K="$(REPEATS_K)" BENCH_OPT="$(BENCH_OPT)" BB=$(BB) \
		bash bench/run_text_lcp.sh
