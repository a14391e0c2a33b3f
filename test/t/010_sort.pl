# 010_sort.pl — xxl.sort / xxl.sort_into under the conditions the regress
# tests cannot create: a cancel in each phase of the sort (reading the input
# and forming runs, intermediate merge passes, the final merge while rows are
# inserted), temp_file_limit, several sessions sorting at once (pgbench), and
# a backend killed with SIGKILL in the middle of a sort.  After each of them:
# no spill file left, no target table, the session (or server) usable.
# Run by `make test` (scripts/test.sh) as the postgres user.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use XxlHold;

my $node = PostgreSQL::Test::Cluster->new('sort');
$node->init;
# the SIGKILL test needs the postmaster to reinitialize after a crash
# (PostgreSQL::Test::Cluster turns that off); the restart removes temp files
$node->append_conf('postgresql.conf', "restart_after_crash = on\nremove_temp_files_after_crash = on\n");
# order checks read tables in physical order: no scan may start mid-table
$node->append_conf('postgresql.conf', "synchronize_seqscans = off\n");
$node->start;

# ~3M rows of ~45 bytes: at xxl.memory = 2MB that is a few hundred runs and
# several merge passes, so every phase polls for cancels (and can be held).
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.25);
	CREATE TABLE src AS
	SELECT (random() * 1e9)::int AS a, md5(g::text) AS b
	FROM generate_series(1, 3000000) g;
	VACUUM ANALYZE src;
});

# Spill files of backend $pid: xxl's files carry PostgreSQL's temp-file
# prefix (pgsql_tmp<pid>.) in base/pgsql_tmp, so pg_ls_tmpdir() sees them.
sub spill_files
{
	my ($pid) = @_;
	my $cond = defined $pid ? "name LIKE 'pgsql_tmp$pid.%'" : 'true';
	return $node->safe_psql('postgres', "SELECT count(*) FROM pg_ls_tmpdir() WHERE $cond");
}

sub table_exists
{
	my ($name) = @_;
	return $node->safe_psql('postgres', "SELECT to_regclass('$name') IS NOT NULL");
}

# --- the phases of one uninterrupted sort ---------------------------------------

my $sort_into = q{SELECT xxl.sort_into('src', 'a, b', 'sorted')};
my $timing = $node->safe_psql('postgres', qq{
	SET xxl.memory = '2MB';
	$sort_into;
	SELECT format('%s %s %s %s %s', input_ms::int, merge_ms::int, output_ms::int, runs, merge_passes)
	FROM xxl.last_stats();
});
my ($count, $stats) = split /\n/, $timing;
my ($input_ms, $merge_ms, $output_ms, $runs, $passes) = split / /, $stats;
note("uninterrupted: input $input_ms ms, merge $merge_ms ms, output $output_ms ms, $runs runs, $passes passes");
is($count, '3000000', 'sort_into returns the row count');
cmp_ok($passes, '>=', 2, 'a 2MB budget forces intermediate merge passes');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT a, b, lag(a) OVER () AS pa, lag(b) OVER () AS pb FROM sorted) s
	WHERE (pa, pb) > (a, b)}), '0', 'the target is in ORDER BY a, b order');
is(spill_files(), '0', 'no spill files after a successful sort');
$node->safe_psql('postgres', 'DROP TABLE sorted');

# --- cancel in each phase ---------------------------------------------------------

# The sort is held inside the engine in the phase (xxl.test_hold), then
# canceled there: the engine sees the cancel at its poll and cleans up.
for my $want (qw(input merge output))
{
	my ($bg, $pid) = start_held($node, $want, ["SET xxl.memory = '2MB'"], $sort_into);
	my $saw_files = spill_files($pid) > 0;
	my $t0 = time;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$node->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the canceled sort did not end';
	note(sprintf('cancel in the %s phase took effect after %.2f s', $want, time - $t0));
	my $phase = $bg->query(q{
		SELECT CASE WHEN completed THEN 'done'
			WHEN output_ms > 0 THEN 'output' WHEN merge_ms > 0 THEN 'merge' ELSE 'input' END
		FROM xxl.last_stats()});
	is($phase, $want, "canceled in the $want phase");
	like($bg->{stderr}, qr/canceling statement due to user request/, "$want: the cancel error reaches the client");
	$bg->{stderr} = '';
	ok($saw_files || $want eq 'input', "$want: the sort had spill files while it ran");
	is(spill_files($pid), '0', "$want: no spill files after the cancel");
	is(table_exists('sorted'), 'f', "$want: no target table after the cancel");
	is($bg->query_safe('SELECT count(*) FROM xxl.sort($$VALUES (2), (1)$$, $$1$$) AS s(x int)'),
		'2', "$want: the session works after the cancel");
	$bg->quit;
}

# statement_timeout is a cancel too (the sort held in its merge until the
# timeout fires: a fast machine finished it within the second)
my ($rc, $out, $err) = $node->psql('postgres', qq{
	SET xxl.memory = '2MB'; SET xxl.test_hold = 'merge'; SET statement_timeout = '1s';
	$sort_into;
});
like($err, qr/canceling statement due to statement timeout/, 'statement_timeout stops the sort');
is(spill_files(), '0', 'no spill files after the timeout');
is(table_exists('sorted'), 'f', 'no target table after the timeout');

# xxl.sort() in FROM (the custom scan) cleans up the same way when canceled
# while its rows stream out, or when the consumer stops early
{
	# held in the final merge, while its rows stream to the consumer
	my ($bg, $pid) = start_held($node, 'output', ["SET xxl.memory = '2MB'"],
		q{SELECT count(*) FROM xxl.sort('src', 'a, b') AS s(a int, b text)});
	cmp_ok(spill_files($pid), '>', 0, 'custom scan: spill files while rows stream out');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$node->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the canceled scan did not end';
	# the next query collects the canceled one's error
	is($bg->query('SELECT 1'), '1', 'custom scan: the session works after the cancel');
	like($bg->{stderr}, qr/canceling statement due to user request/, 'custom scan: the cancel reaches the client');
	$bg->{stderr} = '';
	is(spill_files($pid), '0', 'custom scan: no spill files after a cancel while rows stream out');
	is($bg->query_safe(q{SELECT a FROM xxl.sort('src', 'a DESC') AS s(a int, b text) LIMIT 1}),
		$node->safe_psql('postgres', 'SELECT max(a) FROM src'), 'custom scan: a LIMIT takes the first row');
	is(spill_files($pid), '0', 'custom scan: no spill files after a LIMIT');
	$bg->quit;
}

# --- temp_file_limit ----------------------------------------------------------------

($rc, $out, $err) = $node->psql('postgres', qq{
	SET xxl.memory = '2MB'; SET temp_file_limit = '10MB';
	\\set VERBOSITY verbose
	$sort_into;
});
like($err, qr/53400: temporary file size exceeds temp_file_limit \(10240kB\)/,
	"temp_file_limit: PostgreSQL's own error, SQLSTATE 53400");
is(spill_files(), '0', 'no spill files after temp_file_limit');
is(table_exists('sorted'), 'f', 'no target table after temp_file_limit');

# --- several sessions at once ----------------------------------------------------------

# Each transaction sorts a 200k-row query into its own table (named from a
# sequence) and records the order it saw from the set-returning form; both
# are checked against ORDER BY afterwards.
$node->safe_psql('postgres', q{
	CREATE TABLE small AS SELECT a, b FROM src LIMIT 200000;
	CREATE SEQUENCE target_no;
	CREATE TABLE seen (client int, digest text);
});
my $script = $node->basedir . '/sort.pgbench';
PostgreSQL::Test::Utils::append_to_file($script, q{
SET xxl.memory = '1MB';
SELECT xxl.sort_into('small', 'a, b', 'out_' || nextval('target_no'));
INSERT INTO seen SELECT :client_id, md5(string_agg(a || ':' || b, ',')) FROM xxl.sort('SELECT a, b FROM small', 'a, b') AS s(a int, b text);
});
$node->command_ok(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-t', '3', '-f', $script, '-p', $node->port, '-h', $node->host, 'postgres' ],
	'pgbench: 4 sessions sorting at once');
my $expected = $node->safe_psql('postgres', q{SELECT md5(string_agg(a || ':' || b, ',' ORDER BY a, b)) FROM small});
is($node->safe_psql('postgres', "SELECT count(*), count(*) FILTER (WHERE digest = '$expected') FROM seen"),
	'12|12', 'every session saw the rows in ORDER BY order');
is($node->safe_psql('postgres', q{
	DO $$
	DECLARE bad int := 0; n int;
	BEGIN
		FOR i IN 1..12 LOOP
			EXECUTE format('SELECT count(*) FROM (SELECT a, b, lag(a) OVER () pa, lag(b) OVER () pb FROM out_%s) s WHERE (pa, pb) > (a, b)', i) INTO n;
			bad := bad + n;
			EXECUTE format('SELECT count(*) FROM out_%s', i) INTO n;
			IF n <> 200000 THEN bad := bad + 1; END IF;
		END LOOP;
		RAISE NOTICE 'bad %', bad;
		IF bad > 0 THEN RAISE EXCEPTION 'unsorted or incomplete targets'; END IF;
	END $$;
	SELECT 'ok'}), 'ok', 'every sort_into target is complete and sorted');
is(spill_files(), '0', 'no spill files after the concurrent sorts');

# --- SIGKILL in the middle of a sort -----------------------------------------------------

my ($bg, $pid) = start_held($node, 'merge', ["SET xxl.memory = '2MB'"], $sort_into);
my $names = $node->safe_psql('postgres', "SELECT string_agg(name, ' ') FROM pg_ls_tmpdir()");
like($names, qr/^pgsql_tmp$pid\./, "spill files carry PostgreSQL's temp-file prefix ($names)");
kill 'KILL', $pid;
# psql may have ended with its server already: writing it \q then breaks the pipe
{
	local $SIG{PIPE} = 'IGNORE';
	eval { $bg->quit };
}
# the postmaster reinitializes after a backend crash; wait for it.  A psql
# that finds the server still restarting exits before it reads its query,
# and IPC::Run dies writing it (a broken pipe): that is an attempt too.
my $back;
for (my $try = 0; $try < 300 && !defined $back; $try++)
{
	local $SIG{PIPE} = 'IGNORE';
	$back = eval { $node->poll_query_until('postgres', 'SELECT 1', '1') };
}
$back or die 'the server did not come back';
is(spill_files(), '0', 'no spill files after SIGKILL and the crash restart');
is(table_exists('sorted'), 'f', 'no target table after SIGKILL');
is($node->safe_psql('postgres', q{SELECT count(*) FROM xxl.sort('small', 'a') AS s(a int, b text)}),
	'200000', 'the server sorts again after the crash restart');

$node->stop;
done_testing();
