#!/usr/bin/env bash
# lint-omp.sh — the engine's rule that every OpenMP region runs with all
# signals blocked (src/core/xxl_common.h, xxl_signals_block), checked on the
# source: each "#pragma omp parallel" must follow, in the same function, a
# call that blocks them, or carry the comment "signals: blocked by the
# caller" on the line before it (a region in a function only ever called
# inside a blocked region).  Prints one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
passed=0
failed=0
while IFS= read -r line; do
	case $line in
	ok:*) passed=$((passed + 1)) ;;
	bad:*) failed=$((failed + 1)); echo "${line#bad:}: OpenMP region without xxl_signals_block()" ;;
	esac
done < <(awk '
	FNR == 1 { blocked = 0; prev = "" }
	/^}/ { blocked = 0 }
	/xxl_signals_block\(/ { blocked = 1 }
	/#pragma omp parallel/ {
		if (blocked || prev ~ /signals: blocked by the caller/)
			print "ok:" FILENAME ":" FNR
		else
			print "bad:" FILENAME ":" FNR
	}
	/[^ \t]/ { prev = $0 }
' $(find src/core -name '*.c' -o -name '*.h' | sort))
echo "omp regions: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
