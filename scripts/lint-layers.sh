#!/usr/bin/env bash
# lint-layers.sh — the layers' include rule (docs/engine.md), checked on the
# source: src/core includes no PostgreSQL or glue header, and a folder of
# src/pg includes only headers of its own folder or of a folder before it
# in runtime < io < sort < plan < graph, text, table (pgxxl.c, on top, may
# include any).  One check per file; prints one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rank() {
	case $1 in
	runtime) echo 0 ;;
	io) echo 1 ;;
	sort) echo 2 ;;
	plan) echo 3 ;;
	graph | text | table) echo 4 ;;
	*) echo -1 ;;
	esac
}
passed=0
failed=0
for f in $(find src/core -name '*.[ch]' | sort); do
	bad=$(grep -nE '#include "(pg/|postgres|fmgr|utils/|access/|catalog/|executor/|nodes/|storage/)' "$f")
	if [ -n "$bad" ]; then
		failed=$((failed + 1))
		echo "$f: the engine includes PostgreSQL or the glue: $bad"
	else
		passed=$((passed + 1))
	fi
done
for f in $(find src/pg -mindepth 2 -name '*.[ch]' | sort); do
	dir=${f#src/pg/}
	dir=${dir%%/*}
	own=$(rank "$dir")
	ok=1
	if [ "$own" -lt 0 ]; then
		echo "$f: folder $dir has no place in the layers (scripts/lint-layers.sh)"
		ok=0
	fi
	while IFS= read -r inc; do
		[ -z "$inc" ] && continue
		to=${inc#pg/}
		to=${to%%/*}
		[ "$to" = "$dir" ] && continue
		r=$(rank "$to")
		if [ "$r" -lt 0 ] || [ "$r" -ge "$own" ]; then
			echo "$f: $dir/ includes $inc, a folder not below it"
			ok=0
		fi
	done < <(sed -nE 's/^#include "(pg\/[^"]+)".*/\1/p' "$f")
	if [ $ok -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "layers: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
