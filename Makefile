# Makefile — builds pgxxl: the PostgreSQL extension through PGXS, the engine's
# standalone unit tests (no PostgreSQL needed), and the entry points a person
# uses: `make demo`, `make test`, `make bench-core`.
#
# Source and test lists are discovered with $(wildcard) so that adding a file
# under src/core, src/pg, sql/ or test/ never needs an edit here.

EXTENSION = pgxxl
MODULE_big = pgxxl
# The version lives in one place, the control file; scripts, xxl.version()
# and the update test follow it.
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(dir $(lastword $(MAKEFILE_LIST)))pgxxl.control)
PGFILEDESC = "pgxxl - external-memory algorithms for PostgreSQL"

CORE_SRCS := $(sort $(wildcard src/core/*.c src/core/*/*.c))
PG_SRCS := $(sort $(wildcard src/pg/*.c src/pg/*/*.c))
OBJS = $(CORE_SRCS:.c=.o) $(PG_SRCS:.c=.o)

# Full install scripts: the oldest version's (pgxxl--0.1.sql), the ones
# released since 0.7 (kept byte for byte) and the current one's
# (pgxxl--<default_version>.sql); the other versions install from the
# oldest through the update scripts pgxxl--A--B.sql.  A released script is
# never edited: a change goes into the next version's script and its update
# script.
UPDATE_SCRIPTS := $(sort $(wildcard sql/pgxxl--*--*.sql))
DATA = $(sort $(filter-out $(UPDATE_SCRIPTS),$(wildcard sql/pgxxl--*.sql))) $(UPDATE_SCRIPTS)

# pg_regress tests: test/sql/*.sql against test/expected/*.out, in a
# database pg_regress makes with the extension in it.
REGRESS := $(sort $(basename $(notdir $(wildcard test/sql/*.sql))))
REGRESS_OPTS = --inputdir=test --load-extension=pgxxl

# Includes name their layer: "core/xxl_sort.h", "core/graph/xxl_graph.h", "pg/io/xxl_input.h".
PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir)
PG_CFLAGS = -std=gnu11 -O2 -fopenmp -pthread -DPGXXL_VERSION='"$(EXTVERSION)"'
SHLIB_LINK += -fopenmp -pthread $(ICU_LIBS)
# libpq: the shard folder talks to shards over postgres_fdw's connections
SHLIB_LINK_INTERNAL = $(libpq)

# Debian's PostgreSQL 15 lives here; /usr/bin/pg_config may describe libpq only.
PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/15/bin/pg_config) \
	$(shell command -v pg_config 2>/dev/null))
PGXS := $(if $(PG_CONFIG),$(shell $(PG_CONFIG) --pgxs 2>/dev/null))

# Benchmarks are someone else's makefile; these are its defaults.
N ?= 50000000
MEM ?= 64

.PHONY: test demo deps deps-bench core-tests bench-core bench dist deb

ifneq ($(and $(PGXS),$(wildcard $(PGXS))),)

# JIT bitcode for the engine is of no use (it never runs inside an expression)
# and would only add a dependency on clang.
override with_llvm = no

include $(PGXS)

# PGXS warns about C99-style declarations; the engine is written in C11.
# The engine's per-record paths are built as the benchmarks build them: at
# PostgreSQL's -O2 (with its stack protector) gcc left small-record copies
# and merge decoding as calls, and DC3 ran slower in the server than alone.
$(CORE_SRCS:.c=.o): CFLAGS += -Wno-declaration-after-statement -O3 -fno-stack-protector

# PGXS tracks no header dependencies: a struct that grows in an engine
# header must rebuild every object that embeds it, or the library mixes
# two layouts (a stack smash in the glue, seen once).
$(OBJS): $(wildcard src/core/*.h src/core/*/*.h src/pg/*.h src/pg/*/*.h)
# xxl.version() says the control file's version, compiled in
src/pg/pgxxl.o: pgxxl.control

else

# Bare machine: no PostgreSQL server headers yet.  Install them, then start over.
all:
	@echo "pgxxl: PostgreSQL 15 server development files are missing;" \
		"run 'make deps' (or 'make test' / 'make demo', which do it)" >&2
	@exit 1

# (Once only: if the headers are still missing after deps.sh, stop.)
install installcheck:
ifdef PGXXL_AFTER_DEPS
	@echo "pgxxl: PGXS not found even after scripts/deps.sh (PG_CONFIG=$(PG_CONFIG))" >&2
	@exit 1
else
	bash scripts/deps.sh
	$(MAKE) $@ PGXXL_AFTER_DEPS=1
endif

clean:
	rm -rf $(BUILD) tmp_check results regression.diffs regression.out log \
		src/*/*.o src/*/*/*.o src/*/*.bc src/*/*/*.bc pgxxl.so

endif

# --- entry points ----------------------------------------------------------

test:
	@bash scripts/test.sh

demo:
	@bash scripts/demo.sh

deps:
	bash scripts/deps.sh

deps-bench:
	bash scripts/deps.sh --bench

# The Debian package postgresql-15-pgxxl_<version>_<arch>.deb, in build/deb/
# (debian/, pg_buildext; `make test` installs it and runs its suites there).
deb:
	bash scripts/deb.sh

# The archive PGXN takes: the tree of tag v<version> (HEAD while there is no
# such tag), META.json at its top, under pgxxl-<version>/.
DIST_VERSION = $(EXTVERSION).0
DIST_REF = $(shell git rev-parse -q --verify v$(DIST_VERSION) >/dev/null && echo v$(DIST_VERSION) || echo HEAD)
dist:
	git archive --format=zip --prefix=pgxxl-$(DIST_VERSION)/ -o pgxxl-$(DIST_VERSION).zip $(DIST_REF)
	@echo "pgxxl-$(DIST_VERSION).zip (from $(DIST_REF))"

# --- engine unit tests (plain C, no PostgreSQL) ----------------------------

BUILD = build

CORE_CC ?= gcc
CORE_CFLAGS = -std=gnu11 -O2 -g -fopenmp -pthread -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -Isrc -Itest/core
CORE_LDLIBS = -fopenmp -pthread -lm
CORE_TEST_SRCS := $(sort $(wildcard test/core/test_*.c))
CORE_TEST_BINS := $(patsubst test/core/%.c,$(BUILD)/%,$(CORE_TEST_SRCS))
CORE_STANDALONE_OBJS := $(patsubst src/core/%.c,$(BUILD)/core/%.o,$(CORE_SRCS))

CORE_HDRS := $(wildcard src/core/*.h src/core/*/*.h)

$(BUILD)/core/%.o: src/core/%.c $(CORE_HDRS) | $(BUILD)/core
	@mkdir -p $(@D)
	$(CORE_CC) $(CORE_CFLAGS) -c -o $@ $<

$(BUILD)/test_%: test/core/test_%.c $(CORE_STANDALONE_OBJS) $(CORE_HDRS) $(wildcard test/core/*.h) | $(BUILD)
	$(CORE_CC) $(CORE_CFLAGS) -o $@ $< $(CORE_STANDALONE_OBJS) $(CORE_LDLIBS)

# the LCP test's oracle is libdivsufsort (scripts/deps.sh installs it)
$(BUILD)/test_lcp: CORE_LDLIBS += -ldivsufsort -ldivsufsort64

$(BUILD) $(BUILD)/core:
	mkdir -p $@

core-tests-build: $(CORE_TEST_BINS)

core-tests: core-tests-build
	@bash scripts/core-tests.sh $(CORE_TEST_BINS)

.PHONY: core-tests-build

# --- benchmarks (bench/bench.mk) -------------------------------------------

# Each benchmark installs what it compares against (apt, only when missing).
BENCH_MAKE = $(MAKE) --no-print-directory -f bench/bench.mk N=$(N) MEM=$(MEM)

bench-core:
	bash scripts/deps.sh --bench
	@$(BENCH_MAKE) bench-core

bench-scale bench-sort-sql bench-sort-plans bench-sort-shapes bench-progress bench-graph bench-graph-analytics bench-suffix bench-text-lcp bench-table bench-table-merge bench-shards bench-matrix:
	bash scripts/deps.sh --bench
	@$(BENCH_MAKE) $@

bench:
	bash scripts/deps.sh --bench
	@$(BENCH_MAKE) bench

.PHONY: bench-scale bench-sort-sql bench-sort-plans bench-sort-shapes bench-progress bench-graph bench-graph-analytics bench-suffix bench-text-lcp bench-table bench-table-merge bench-shards bench-matrix

EXTRA_CLEAN = $(BUILD) tmp_check

# The pg_regress tests, for scripts/test.sh's second pass as an ordinary role.
print-regress:
	@echo $(REGRESS)
.PHONY: print-regress
