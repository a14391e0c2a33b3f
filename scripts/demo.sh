#!/usr/bin/env bash
# demo.sh — what `make demo` runs: install what is missing, build and install
# the extension, start a throwaway server that preloads it (as the postgres
# user, in tmp_check/demo/ under the repository), run scripts/demo.sql in it
# with psql, then a sort in the background while another session samples
# the view xxl.progress, then stop the server and remove it.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_root "$@"
cd "$REPO"

cleanup() {
	stop_cluster
	rm -rf "${WORK:-/nonexistent}/server"
}
trap cleanup EXIT

echo "=== build and install"
build_and_install
make_repo_reachable
make_workdir demo
echo "=== starting a throwaway PostgreSQL 15 server"
start_cluster server
# as the README's set-up has it: preloaded, so every session plans XxlSort
# and the progress view has its shared memory
echo "shared_preload_libraries = 'pgxxl'" >>"$CLUSTER_DIR/data/postgresql.conf"
OMP_WAIT_POLICY=passive as_pg "$PGBIN/pg_ctl" -D "$CLUSTER_DIR/data" -l "$WORK/server.log" -w restart >/dev/null
echo "=== scripts/demo.sql"
"$PGBIN/psql" -X -v ON_ERROR_STOP=1 -d postgres -e -f "$REPO/scripts/demo.sql"

echo
echo "=== xxl.progress: xxl.sort_into of the 2M rows at xxl.memory = 4MB in one"
echo "=== session, the view read from another every 0.2 s while it runs"
"$PGBIN/psql" -XAtq -v ON_ERROR_STOP=1 -d demo_utf8 \
	-c "SET xxl.memory = '4MB'" -c "SELECT xxl.sort_into('demo', 'v', 'by_xxl_again')" >/dev/null &
sorter=$!
printf '%-10s %-26s %10s %10s %6s %10s %12s %8s\n' \
	operator phase rows_read rows_total runs spill memory_peak percent
while kill -0 $sorter 2>/dev/null; do
	"$PGBIN/psql" -XAtq -d demo_utf8 -c "
		SELECT format('%-10s %-26s %10s %10s %6s %10s %12s %8s', operator, phase, rows_read,
		              rows_total, runs, pg_size_pretty(spill_bytes),
		              coalesce(pg_size_pretty(memory_peak), '-'), coalesce(percent::text, '-'))
		FROM xxl.progress"
	sleep 0.2
done
wait $sorter
echo "=== demo done"
