#!/usr/bin/env bash
# demo.sh — what `make demo` runs: install what is missing, build and install
# the extension, start a throwaway server (as the postgres user, in
# tmp_check/demo/ under the repository), run scripts/demo.sql in it with psql,
# then stop the server and remove it.
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
echo "=== scripts/demo.sql"
"$PGBIN/psql" -X -v ON_ERROR_STOP=1 -d postgres -e -f "$REPO/scripts/demo.sql"
echo "=== demo done"
