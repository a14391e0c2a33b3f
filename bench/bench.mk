# bench/bench.mk — builds and runs the benchmarks that compare pgxxl with its
# peers.  Invoked from the repository root (the top-level Makefile delegates
# here):
#
#   make -f bench/bench.mk bench-core N=50000000 MEM=64
#
# bench-core: pgxxl's external sorter (src/core, linked statically, no
# PostgreSQL) against STXXL's stxxl::sorter on the same records, budget,
# block size and disk; prints both, writes bench/out/core_sort.{csv,png,log}
# and ends with `ratio pgxxl/stxxl = X.XX`.  See bench/README.md.
#
# When this file runs as a sub-make, call it with --no-print-directory, or
# make's "Leaving directory" line follows the ratio line.
#
# Other benchmarks hook in through bench/*.mk files next to this one, which
# are included below and may add prerequisites to `bench`.

N ?= 50000000
MEM ?= 64
REPEAT ?= 1
BENCH_DIR ?=

CC = gcc
CXX = g++
# The same optimisation on both sides; STXXL is header templates, so this
# flag is what its sorter is compiled with too.
BENCH_OPT ?= -O3
BENCH_CFLAGS = -std=gnu11 $(BENCH_OPT) -fopenmp -pthread -Wall -Wextra \
	-Wno-unused-parameter -Wno-sign-compare -Isrc
BENCH_CXXFLAGS = -std=gnu++11 $(BENCH_OPT) -fopenmp -pthread -Wall \
	-Wno-unused-parameter -Wno-deprecated-declarations
BENCH_LDLIBS = -fopenmp -pthread -lm

BB = build/bench
# The sorter and what it uses: the engine's top-level sources (graph/ and
# text/ are not needed), discovered like the top-level Makefile does.
BENCH_CORE_SRCS := $(sort $(wildcard src/core/*.c))
BENCH_CORE_OBJS := $(patsubst src/core/%.c,$(BB)/core/%.o,$(BENCH_CORE_SRCS))
BENCH_CORE_HDRS := $(wildcard src/core/*.h)

# Packages the comparison needs; installed only when dpkg-query says missing.
BENCH_PKGS = gcc g++ make libc6-dev libstxxl-dev gnuplot-nox

.PHONY: bench bench-core bench-core-build bench-deps bench-clean

bench: bench-core

bench-core: bench-core-build
	@N=$(N) MEM=$(MEM) REPEAT=$(REPEAT) BENCH_DIR="$(BENCH_DIR)" BB=$(BB) bash bench/run_core.sh

bench-core-build: bench-deps
	@$(MAKE) --no-print-directory -f bench/bench.mk $(BB)/core_sort_bench $(BB)/stxxl_sort_bench

$(BB)/core/%.o: src/core/%.c $(BENCH_CORE_HDRS) | $(BB)/core
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BB)/core_sort_bench: bench/core_sort_bench.c bench/bench_util.h $(BENCH_CORE_OBJS) $(BENCH_CORE_HDRS) | $(BB)
	$(CC) $(BENCH_CFLAGS) -o $@ $< $(BENCH_CORE_OBJS) $(BENCH_LDLIBS)

$(BB)/stxxl_sort_bench: bench/stxxl_sort_bench.cpp | $(BB)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $< -lstxxl $(BENCH_LDLIBS)

$(BB) $(BB)/core:
	mkdir -p $@

bench-deps:
	@missing=; \
	for p in $(BENCH_PKGS); do \
		s=$$(dpkg-query -W -f='$${db:Status-Status}' $$p 2>/dev/null || true); \
		[ "$$s" = installed ] || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	echo "bench: installing$$missing"; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	export DEBIAN_FRONTEND=noninteractive; \
	opts="-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"; \
	$$sudo apt-get install $$opts $$missing </dev/null || \
		{ $$sudo apt-get update -q </dev/null && $$sudo apt-get install $$opts $$missing </dev/null; }

bench-clean:
	rm -rf $(BB) bench/out

-include $(filter-out bench/bench.mk,$(wildcard bench/*.mk))

# The in-memory shortest paths' phases, engine only (bench/core_paths_profile.c).
BENCH_GRAPH_SRCS := $(sort $(wildcard src/core/*.c src/core/graph/*.c))
BENCH_GRAPH_OBJS := $(patsubst src/core/%.c,$(BB)/core/%.o,$(BENCH_GRAPH_SRCS))
DIRECTED ?= 1
RUNS ?= 5

.PHONY: core-paths-profile
core-paths-profile: $(BB)/core_paths_profile
	$(BB)/core_paths_profile $(DIRECTED) $(RUNS)

$(BB)/core/graph/%.o: src/core/graph/%.c $(wildcard src/core/*.h src/core/graph/*.h) | $(BB)/core
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

$(BB)/core_paths_profile: bench/core_paths_profile.c $(BENCH_GRAPH_OBJS) | $(BB)
	$(CC) $(BENCH_CFLAGS) -o $@ $< $(BENCH_GRAPH_OBJS) $(BENCH_LDLIBS)
