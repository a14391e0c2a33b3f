#!/usr/bin/env bash
# lint-layers.sh — the layers' include rule (docs/engine.md), checked on the
# source: src/core includes no PostgreSQL or glue header, and a folder of
# src/pg includes only headers of its own folder or of a folder before it
# in runtime < io < sort < plan < graph, matrix, text, table < shard (pgxxl.c, on top, may
# include any), and from another folder only through its public header
# (pg/<folder>/<folder>.h); in table/, a file of the storage level
# includes no writers' or nodes' header, a writer no nodes' header.
# One check per file; prints one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rank() {
	case $1 in
	runtime) echo 0 ;;
	io) echo 1 ;;
	sort) echo 2 ;;
	plan) echo 3 ;;
	graph | matrix | text | table) echo 4 ;;
	shard) echo 5 ;;
	*) echo -1 ;;
	esac
}
# the level of a file of table/ (storage 0 < writers 1 < nodes 2), by name
table_level() {
	case $1 in
	xxl_table_storage.h | xxl_table_page.c | xxl_table_dir.c | xxl_table_pending.c | \
		xxl_table_options.c | xxl_table_deleted.c | xxl_table_scan.c | xxl_table_index.c | table.h) echo 0 ;;
	xxl_table_writers.h | xxl_table_write.c | xxl_table_delete.c | xxl_table_merge.c | \
		xxl_table_ends.c | xxl_table_am.c) echo 1 ;;
	*) echo 2 ;;
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
		if [ "$inc" != "pg/$to/$to.h" ]; then
			echo "$f: includes $inc, not the public header pg/$to/$to.h"
			ok=0
		fi
	done < <(sed -nE 's/^#include "(pg\/[^"]+)".*/\1/p' "$f")
	if [ "$dir" = table ]; then
		own_level=$(table_level "$(basename "$f")")
		while IFS= read -r inc; do
			[ -z "$inc" ] && continue
			l=$(table_level "$(basename "$inc")")
			if [ "$l" -gt "$own_level" ]; then
				echo "$f: includes $inc, a level of the table AM above its own"
				ok=0
			fi
		done < <(sed -nE 's/^#include "(pg\/table\/[^"]+)".*/\1/p' "$f")
	fi
	if [ $ok -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# every folder has its public header; pgxxl.c enters folders through them
for d in $(find src/pg -mindepth 1 -maxdepth 1 -type d | sort); do
	if [ -f "$d/$(basename "$d").h" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "$d: no public header $(basename "$d").h"
	fi
done
bad=$(sed -nE 's/^#include "(pg\/[^"]+)".*/\1/p' src/pg/pgxxl.c |
	awk -F/ '$3 != $2 ".h"')
if [ -n "$bad" ]; then
	failed=$((failed + 1))
	echo "src/pg/pgxxl.c: includes $bad, not a folder's public header"
else
	passed=$((passed + 1))
fi
echo "layers: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
