#!/usr/bin/env bash
# core-tests.sh — runs the engine's unit-test programs (build/test_*, made by
# `make core-tests`) one after another and adds up their closing
# "N passed, N failed" lines into one such line.  A program that crashes or
# exits non-zero without reporting a failure counts as one failure more.
#
# usage: scripts/core-tests.sh build/test_a build/test_b ...
set -uo pipefail

passed=0
failed=0
if [ $# -eq 0 ]; then
	echo "core tests: none found under test/core"
fi
# rules checked on the source: every OpenMP region blocks signals, the
# layers include only what lies below them, and META.json is PGXN's
for rule in lint-omp.sh lint-layers.sh lint-meta.sh; do
	lint=$(bash "$(dirname "${BASH_SOURCE[0]}")/$rule")
	echo "$lint"
	line=$(echo "$lint" | tail -n 1)
	passed=$((passed + ${line%% passed*}))
	f=${line#*passed, }
	failed=$((failed + ${f%% failed*}))
done
for prog in "$@"; do
	name=$(basename "$prog")
	echo "=== $name"
	out=$(mktemp)
	"$prog" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1 || true)
	rm -f "$out"
	if [ -n "$line" ]; then
		p=${line%% passed*}
		f=${line#*passed, }
		f=${f%% failed*}
	else
		p=0
		f=0
		echo "$name: no summary line (exit status $rc)"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$name: exit status $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "core tests: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
