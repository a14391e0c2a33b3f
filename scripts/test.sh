#!/usr/bin/env bash
# test.sh — what `make test` runs: install what is missing, build and install
# the extension, then run every test suite against throwaway servers and close
# with one "N passed, N failed" line adding up all of them:
#   - engine unit tests (test/core/test_*.c; each test case counts)
#   - pg_regress tests (test/sql/*.sql against test/expected/*.out; each file counts)
#   - TAP tests (test/t/*.pl; each assertion counts, a file that dies counts
#     as one failure)
#   - the Debian package: every suite that needs a server runs against pgxxl
#     as postgresql-15-pgxxl installs it (built by scripts/deb.sh, nothing
#     from the build tree's `make install`); at the end the package is
#     removed and nothing of pgxxl may be left in PostgreSQL's directories
#     (each step counts); outside CI the build tree is installed again
# Exits non-zero if anything failed.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_root "$@"
cd "$REPO"

PASSED=0
FAILED=0
add() { PASSED=$((PASSED + $1)); FAILED=$((FAILED + $2)); }

finish() {
	trap - EXIT
	# engine unit tests still running beside an aborted run go with it
	[ -n "${CORE_PID:-}" ] && kill "$CORE_PID" 2>/dev/null
	rm -f "${CORE_LOG:-}"
	stop_cluster
	echo
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && exit 0
	exit 1
}
trap 'add 0 1; finish' EXIT

# --- build: the Debian package --------------------------------------------
# Every suite that needs a server runs against pgxxl as the package
# postgresql-15-pgxxl installs it (scripts/deb.sh builds it), not against
# the build tree's `make install`; if the package does not build or
# install, against `make install`, with one failure counted.
# pgxxl's files in PostgreSQL's directories, whoever put them there
pgxxl_files() {
	find "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)/extension" -maxdepth 2 \
		-name 'pgxxl*' 2>/dev/null
}
echo "=== build and install: the Debian package"
DEB_INSTALLED=
if bash scripts/deps.sh && deb=$(bash scripts/deb.sh "$REPO/build/deb" | tail -n 1) &&
	[ -f "$deb" ]; then
	# what `make install` put there goes first, so that only the package's files are used
	dpkg -r postgresql-15-pgxxl >/dev/null 2>&1 || true
	pgxxl_files | xargs -r rm -rf
	if dpkg -i "$deb" >"$REPO/build/deb/install.log" 2>&1; then
		DEB_INSTALLED=1
	fi
fi
if [ -n "$DEB_INSTALLED" ]; then
	echo "installed $(basename "$deb"); the suites below run against it:"
	dpkg -L postgresql-15-pgxxl | grep -E 'pgxxl(\.so|\.control)$'
	add 1 0
else
	echo "the package did not build or install; the suites below run against make install"
	cat "$REPO/build/deb/install.log" 2>/dev/null || true
	add 0 1
	if ! build_and_install; then
		echo "build or install failed"
		add 0 1
		finish
	fi
fi

# A developer may run some suites only: PGXXL_SUITES="regress tap" (default: all).
SUITES=" ${PGXXL_SUITES:-core regress tap} "
suite() { [[ $SUITES == *" $1 "* ]]; }

# --- engine unit tests ---------------------------------------------------
# They need no server and keep about one core busy, as the pg_regress runs
# do: they are built here and run beside those (their report follows them).
CORE_LOG=$(mktemp)
CORE_PID=
if suite core; then
	echo "=== engine unit tests (built now, run beside pg_regress)"
	if make -s -j"$(nproc)" core-tests-build >"$CORE_LOG" 2>&1; then
		make -s --no-print-directory core-tests >>"$CORE_LOG" 2>&1 &
		CORE_PID=$!
	else
		cat "$CORE_LOG"
		echo "engine unit tests did not build"
		add 0 1
	fi
fi
# core_report: wait for the engine unit tests, show them, add them up
core_report() {
	local rc line p f
	[ -n "$CORE_PID" ] || return 0
	wait "$CORE_PID"
	rc=$?
	CORE_PID=
	echo "=== engine unit tests"
	cat "$CORE_LOG"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$CORE_LOG" | tail -n 1 || true)
	if [ -n "$line" ]; then
		p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
		add "$p" "$f"
		[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && add 0 1
	else
		echo "engine unit tests did not run"
		add 0 1
	fi
	rm -f "$CORE_LOG"
}

# --- pg_regress ----------------------------------------------------------
# count_regress LOG RC OUTDIR: a pg_regress run's tests into the totals (one
# failure more if it failed without naming a test), and its diffs shown
count_regress() {
	local p f
	p=$(grep -cE ' \.\.\. ok' "$1" || true)
	f=$(grep -cE ' \.\.\. (FAILED|failed)' "$1" || true)
	add "$p" "$f"
	if [ "$2" -ne 0 ]; then
		[ "$f" -eq 0 ] && add 0 1
		if [ -s "$3/regression.diffs" ]; then
			echo "--- $3/regression.diffs"
			cat "$3/regression.diffs"
		fi
	fi
}
PGXS_REGRESS=$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress
make_repo_reachable
make_workdir test
if suite regress; then
echo "=== pg_regress"
if start_cluster server; then
	log=$WORK/installcheck.log
	make -s PG_CONFIG="$PG_CONFIG" installcheck \
		EXTRA_REGRESS_OPTS="--outputdir=$WORK/regress --host=$PGHOST --port=$PGPORT --user=postgres" \
		2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count_regress "$log" "$rc" "$WORK/regress"
	if [ "$rc" -ne 0 ]; then
		echo "--- server log (last 50 lines)"
		tail -n 50 "$WORK/server.log" || true
	fi
else
	add 0 1
fi

# --- pg_regress again, as an ordinary role ---------------------------------
# The same tests as a role that is neither superuser nor the extensions'
# owner, with what a DBA grants an application role: CREATE on the database,
# SET on the testing settings, the roles the tests play.  The superuser
# installs the extensions first (test/include/begin.sql then finds them); tests
# that install extensions or create databases themselves run only above.
SUPERUSER_ONLY="version sort_collation_db sort_privileges output_target_event sort_in_plans_c_agg"
if [ -n "${CLUSTER_STARTED:-}" ]; then
	echo "=== pg_regress as an ordinary role (regress_xxl_user)"
	roles=$(grep -ohE "xt_role\('[a-z_]+'\)" test/sql/*.sql | sed -E "s/.*'([a-z_]+)'.*/\1/" | sort -u)
	setup=$WORK/ordinary-setup.sql
	{
		echo "DROP DATABASE IF EXISTS contrib_regression;"
		echo "CREATE ROLE regress_xxl_user LOGIN;"
		for r in $roles; do
			echo "SELECT format('CREATE ROLE %I', '$r') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$r') \\gexec"
			echo "GRANT $r TO regress_xxl_user;"
		done
		echo "CREATE DATABASE contrib_regression;"
		echo "GRANT CREATE ON DATABASE contrib_regression TO regress_xxl_user;"
		echo "\\c contrib_regression"
		echo "CREATE EXTENSION pgxxl;"
		echo "CREATE EXTENSION pgrouting CASCADE;"
		echo "CREATE EXTENSION pg_buffercache;"
		echo "CREATE EXTENSION bloom;"
		echo "GRANT CREATE ON SCHEMA public TO regress_xxl_user;"
		echo "GRANT SELECT ON pg_buffercache TO regress_xxl_user;"
		echo "GRANT EXECUTE ON FUNCTION pg_buffercache_pages() TO regress_xxl_user;"
		echo "GRANT EXECUTE ON FUNCTION pg_ls_tmpdir() TO regress_xxl_user;"
		echo "GRANT pg_read_all_settings TO regress_xxl_user;"
		echo "GRANT SET ON PARAMETER temp_file_limit, xxl.disks, xxl.test_hold, xxl.debug_fail_writes_after,"
		echo "  xxl.graph_force_external, xxl.graph_max_semi_nodes, xxl.text_force_external,"
		echo "  xxl.test_listed_dirpages TO regress_xxl_user;"
	} >"$setup"
	chmod 644 "$setup"
	tests=()
	for t in $(make -s --no-print-directory PG_CONFIG="$PG_CONFIG" print-regress); do
		case " $SUPERUSER_ONLY " in *" $t "*) ;; *) tests+=("$t") ;; esac
	done
	log=$WORK/installcheck-ordinary.log
	if as_pg "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -f "$setup" >"$WORK/ordinary-setup.log" 2>&1; then
		"$PGXS_REGRESS" --inputdir=test --bindir="$PGBIN" --outputdir="$WORK/regress-ordinary" \
			--host="$PGHOST" --port="$PGPORT" --user=regress_xxl_user \
			--use-existing --dbname=contrib_regression "${tests[@]}" 2>&1 | tee "$log"
		count_regress "$log" "${PIPESTATUS[0]}" "$WORK/regress-ordinary"
	else
		cat "$WORK/ordinary-setup.log"
		add 0 1
	fi
fi
stop_cluster
unset PGHOST PGPORT PGUSER
fi

core_report

# --- TAP -----------------------------------------------------------------
if suite tap; then
echo "=== TAP tests"
# PostgreSQL's own regression tests, which 071_sort_in_plans_pg.pl runs with
# xxl.sort_in_plans on and off: from Debian's source package, kept in build/
PG_REGRESS_SRC=$(bash scripts/pg-regress-src.sh "$REPO/build/pg-regress") || PG_REGRESS_SRC=
PGXS_DIR=$(dirname "$("$PG_CONFIG" --pgxs)")/..
PGXS_DIR=$(cd "$PGXS_DIR" && pwd -P)
# initdb takes its locale from LANG: make it one every Debian has
TAP_LANG=C
[ -d /usr/lib/locale/C.utf8 ] && TAP_LANG=C.UTF-8
shopt -s nullglob
# the longest first, so that the others fill the other cores beside them
TAP_SLOW="043_text_smallest_budget 044_text_lcp_smallest_budget 034_graph_smallest_budget 050_output_pages"
taps=()
for s in $TAP_SLOW; do
	[ -f "$REPO/test/t/$s.pl" ] && taps+=("$REPO/test/t/$s.pl")
done
for t in "$REPO"/test/t/*.pl; do
	case " $TAP_SLOW " in *" $(basename "$t" .pl) "*) ;; *) taps+=("$t") ;; esac
done
if [ ${#taps[@]} -eq 0 ]; then
	echo "no TAP tests"
fi
# One TAP script, its output to $WORK/tap-NAME.out and its exit status to .rc.
run_tap() {
	local t=$1 name dir log
	name=$(basename "$t" .pl)
	dir=$WORK/tap/$name
	log=$WORK/tap-$name.out
	as_pg mkdir -p "$dir"
	(cd "$dir" && as_pg env -u PGHOST -u PGPORT -u PGUSER -u PGDATABASE \
		LANG="$TAP_LANG" TESTDIR="$dir" PATH="$PGBIN:$PATH" PG_REGRESS="$PGXS_DIR/test/regress/pg_regress" \
		PGXXL_REPO="$REPO" PGXXL_PG_REGRESS_SRC="$PG_REGRESS_SRC" OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" \
		prove -I "$PGXS_DIR/test/perl" -I "$REPO/test/perl" "$t") >"$log" 2>&1
	echo $? >"$log.rc"
}
# TAP_JOBS scripts at a time (each starts its own clusters on free ports;
# serially they took 6 minutes of the CI run), reported in order.
TAP_JOBS=${TAP_JOBS:-$(nproc)}
for t in "${taps[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$TAP_JOBS" ]; do
		wait -n
	done
	run_tap "$t" &
done
wait
for t in "${taps[@]}"; do
	name=$(basename "$t" .pl)
	dir=$WORK/tap/$name
	log=$WORK/tap-$name.out
	cat "$log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	tests=$(sed -nE 's/^Files=[0-9]+, Tests=([0-9]+),.*/\1/p' "$log" | tail -n 1)
	tests=${tests:-0}
	bad=$(sed -nE 's/.*Failed ([0-9]+)\/([0-9]+) subtests.*/\1/p' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		add "$tests" 0
	elif [ -n "$bad" ]; then
		add $((tests - bad)) "$bad"
	else
		add "$tests" 1
	fi
	if [ "$rc" -ne 0 ]; then
		for f in "$dir"/tmp_check/log/regress_log_*; do
			echo "--- $f (last 80 lines)"
			tail -n 80 "$f"
		done
	fi
done
fi

# --- the Debian package removed -------------------------------------------
if [ -n "$DEB_INSTALLED" ]; then
	echo "=== Debian package removed"
	left=$(pgxxl_files)
	if dpkg -r postgresql-15-pgxxl >/dev/null 2>&1 && left=$(pgxxl_files) && [ -z "$left" ]; then
		echo "removed; nothing of pgxxl left in PostgreSQL's directories"
		add 1 0
	else
		echo "left after removing the package:"
		echo "$left"
		add 0 1
	fi
	# a developer's machine as `make install` leaves it (CI's is thrown away)
	if [ -z "${CI:-}" ]; then
		build_and_install >/dev/null || echo "make install failed"
	fi
fi

if [ "$FAILED" -eq 0 ]; then
	rm -rf "$WORK"/server "$WORK"/tap/*/tmp_check/t_*_data
fi
finish
