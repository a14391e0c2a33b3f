#!/usr/bin/env bash
# lint-omp.sh — the engine's rule that every thread it starts runs with all
# signals blocked (src/core/xxl_common.h), checked on the source: an
# OpenMP region is started only through XXL_OMP_PARALLEL (no "#pragma omp
# parallel" of its own), and signals are blocked by hand only where the
# two starters are defined (xxl_common.h, xxl_thread_start in common.c).
# One check per file; prints one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
passed=0
failed=0
for f in $(find src/core -name '*.c' -o -name '*.h' | sort); do
	ok=1
	bad=$(grep -nE '^[[:space:]]*#[[:space:]]*pragma[[:space:]]+omp[[:space:]]+parallel' "$f")
	if [ -n "$bad" ]; then
		echo "$f: an OpenMP region not started by XXL_OMP_PARALLEL: $bad"
		ok=0
	fi
	case $f in
	src/core/xxl_common.h | src/core/common.c) ;;
	*)
		bad=$(grep -nE 'xxl_signals_(block|restore)\(|pthread_create\(' "$f")
		if [ -n "$bad" ]; then
			echo "$f: signals blocked or a thread started by hand (use XXL_OMP_PARALLEL or xxl_thread_start): $bad"
			ok=0
		fi
		;;
	esac
	if [ $ok -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "omp regions: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
