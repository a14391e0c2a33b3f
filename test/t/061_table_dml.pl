# 061_table_dml.pl — DELETE and UPDATE on xxl tables across sessions
# (docs/table.md, "Deletes and updates"): a second deleter of the same row
# waits for the first and then finds it gone (READ COMMITTED skips it, a
# concurrent UPDATE fails with 40001, REPEATABLE READ fails with 40001);
# uncommitted deletes are invisible to others; a unique check waits for an
# uncommitted delete of its key; pgbench clients updating the same rows with
# retries lose no update; a canceled UPDATE leaves no spill file and
# changes nothing; committed deletes survive an immediate shutdown (also
# at wal_level = minimal, unlogged until the commit syncs them)
# and uncommitted ones do not; a standby sees the same rows.  Waiting is
# reached by polling pg_locks / pg_stat_activity, never by sleeping.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE t (a int, b text) USING xxl;
	SELECT xxl.alter_table_set('t', 'a');
	INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 10000) g;
	CREATE TABLE u (k int, v text) USING xxl;
	CREATE UNIQUE INDEX u_k ON u (k);
	INSERT INTO u SELECT g, 'v' || g FROM generate_series(1, 100) g;
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# Run $statement in session $bg without waiting for it; return once the
# backend $pid waits for a lock.
sub start_waiting
{
	my ($bg, $pid, $statement, $what) = @_;
	$bg->query_until(qr/started/, "\\echo started\n$statement;\n");
	$primary->poll_query_until('postgres', qq{
		SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid})
	  or die "$what: the statement did not wait for a lock";
}

sub pid_of
{
	my ($bg) = @_;
	return $bg->query_safe('SELECT pg_backend_pid()');
}

# --- a second deleter waits, then finds the row gone ---------------------------------------

my $a = $primary->background_psql('postgres', on_error_stop => 0);
my $b = $primary->background_psql('postgres', on_error_stop => 0);
my $b_pid = pid_of($b);

$a->query_safe('BEGIN');
is($a->query_safe('DELETE FROM t WHERE a = 1 RETURNING a'), '1', 'A deletes row 1');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t WHERE a = 1'), '1',
	'an uncommitted delete is invisible to others');
start_waiting($b, $b_pid, 'DELETE FROM t WHERE a <= 2', 'read committed delete');
is($primary->safe_psql('postgres', qq{
	SELECT locktype || ' ' || mode FROM pg_locks WHERE pid = $b_pid AND NOT granted}),
	'object ExclusiveLock', 'B waits for the deleters\' lock of the table');
$a->query_safe('COMMIT');
my $out = $b->query('SELECT 1');
is($out, '1', 'B goes on once A commits');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t WHERE a <= 2'), '0',
	'rows 1 and 2 are gone (B skipped the row A deleted and deleted row 2)');
is($b->{stderr}, '', 'no error for B');

# --- a concurrent update is an error, not a lost update ---------------------------------

$a->query_safe('BEGIN');
$a->query_safe("UPDATE t SET b = 'by A' WHERE a = 3");
start_waiting($b, $b_pid, "UPDATE t SET b = 'by B' WHERE a = 3", 'read committed update');
$a->query_safe('COMMIT');
$b->query('SELECT 1');
like($b->{stderr}, qr/could not serialize access due to concurrent update/,
	'B\'s update of the row A updated fails with a serialization failure');
$b->{stderr} = '';
is($primary->safe_psql('postgres', 'SELECT b FROM t WHERE a = 3'), 'by A', 'A\'s update stands');

# --- repeatable read -----------------------------------------------------------------------

$b->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($b->query_safe('SELECT count(*) FROM t WHERE a = 4'), '1', 'B\'s snapshot sees row 4');
$primary->safe_psql('postgres', 'DELETE FROM t WHERE a = 4');
is($b->query_safe('SELECT count(*) FROM t WHERE a = 4'), '1', 'B\'s snapshot still sees it');
$b->query('DELETE FROM t WHERE a = 4');
like($b->{stderr}, qr/could not serialize access due to concurrent delete/,
	'repeatable read: deleting a row deleted since the snapshot fails');
$b->{stderr} = '';
$b->query('ROLLBACK');

# --- a unique check waits for an uncommitted delete of its key -----------------------------

$a->query_safe('BEGIN');
$a->query_safe('DELETE FROM u WHERE k = 5');
$b->query_until(qr/started/, "\\echo started\nINSERT INTO u VALUES (5, 'again');\n");
$primary->poll_query_until('postgres', qq{
	SELECT wait_event_type = 'Lock' AND wait_event = 'transactionid'
	FROM pg_stat_activity WHERE pid = $b_pid})
  or die 'the insert did not wait for the deleting transaction';
pass('an insert of a key being deleted waits for the deleter');
$a->query_safe('COMMIT');
$b->query('SELECT 1');
is($b->{stderr}, '', 'and succeeds once the delete commits');
is($primary->safe_psql('postgres', 'SELECT v FROM u WHERE k = 5'), 'again', 'the new row is there');
# the same with a rollback: the old row stays, the insert is a duplicate
$a->query_safe('BEGIN');
$a->query_safe('DELETE FROM u WHERE k = 6');
$b->query_until(qr/started/, "\\echo started\nINSERT INTO u VALUES (6, 'again');\n");
$primary->poll_query_until('postgres', qq{
	SELECT wait_event = 'transactionid' FROM pg_stat_activity WHERE pid = $b_pid})
  or die 'the insert did not wait for the deleting transaction';
$a->query_safe('ROLLBACK');
$b->query('SELECT 1');
like($b->{stderr}, qr/duplicate key value violates unique constraint/,
	'after the delete rolls back the insert is a duplicate');
$b->{stderr} = '';

# --- compaction under an older snapshot: a loud 40001, never an empty table ----------------
# (heap's VACUUM FULL keeps each row's xmin; one merged segment has one)

$primary->safe_psql('postgres', q{
	CREATE TABLE cmp (k int) USING xxl;
	INSERT INTO cmp SELECT g FROM generate_series(1, 1000) g;
	INSERT INTO cmp SELECT g FROM generate_series(1001, 2000) g;
	DELETE FROM cmp WHERE k % 100 = 0;
});
# (the snapshot is taken by a query on another table: one that read cmp
# would hold a lock that compaction waits for)
$b->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$b->query_safe('SELECT count(*) FROM t');
# every segment older than every snapshot: the merged one is frozen, B reads it
$primary->safe_psql('postgres', 'SELECT xxl.compact(\'cmp\')');
is($b->query_safe('SELECT count(*) FROM cmp'), '1980', 'B reads a compaction of what its snapshot saw');
$b->query_safe('ROLLBACK');
# $change, which B's snapshot must not see, then $compaction, which merges
# it with what B saw: B's next read of cmp fails with 40001
sub older_snapshot_fails
{
	my ($change, $compaction, $name) = @_;
	$b->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$b->query_safe('SELECT count(*) FROM t');
	$primary->safe_psql('postgres', $change);
	$primary->safe_psql('postgres', $compaction);
	$b->query('SELECT count(*) FROM cmp');
	like($b->{stderr}, qr/could not serialize access: an xxl table was compacted/, $name);
	$b->{stderr} = '';
	$b->query('ROLLBACK');
}
older_snapshot_fails('INSERT INTO cmp SELECT g FROM generate_series(1, 500) g',
	"SELECT xxl.compact('cmp')",
	'a snapshot older than rows xxl.compact merged fails with a serialization failure');
older_snapshot_fails('DELETE FROM cmp WHERE k <= 10', 'VACUUM FULL cmp',
	'and one older than a delete VACUUM FULL applied');
is($b->query_safe('SELECT count(*) FROM cmp'), '2460', 'a later snapshot reads the compacted rows');
$a->quit;
$b->quit;

# --- pgbench: concurrent updates with retries lose nothing ----------------------------------

$primary->safe_psql('postgres', q{
	CREATE TABLE acct (id int, bal int) USING xxl;
	SELECT xxl.alter_table_set('acct', 'id');
	INSERT INTO acct SELECT g, 0 FROM generate_series(1, 5) g;
	CREATE TABLE ledger (id int, client int);
});
$primary->pgbench(
	'--no-vacuum --client=4 --transactions=40 --max-tries=10000',
	0,
	[qr{processed: 160/160}],
	[qr{^$}],
	'4 clients update the same rows of an xxl table',
	{
		'061_update' => q{
			\set id random(1, 5)
			SET client_min_messages = warning;
			BEGIN;
			UPDATE acct SET bal = bal + 1 WHERE id = :id;
			INSERT INTO ledger VALUES (:id, :client_id);
			END;
		}
	});
is($primary->safe_psql('postgres', q{
	SELECT format('%s %s', count(*), sum(bal)) FROM acct}), '5 160',
	'every account once, and every committed update counted');
is($primary->safe_psql('postgres', q{
	SELECT count(*) FROM acct a
	WHERE bal <> (SELECT count(*) FROM ledger l WHERE l.id = a.id)}), '0',
	'each account\'s balance is its number of committed updates');

# --- cancel: an UPDATE whose new versions are being sorted ---------------------------------

$primary->safe_psql('postgres', q{
	CREATE TABLE big (a bigint, b bigint) USING xxl;
	SELECT xxl.alter_table_set('big', 'a');
	INSERT INTO big SELECT g, g FROM generate_series(1, 200000) g;
});
my $big_before = $primary->safe_psql('postgres', 'SELECT format($$%s %s %s$$, count(*), sum(a), sum(b)) FROM big');
for my $phase ('merge', 'output')
{
	my ($held, $pid) = start_held($primary, $phase, ["SET xxl.memory = '1MB'"],
		'UPDATE big SET a = 1000000 - a, b = b + 1 WHERE a % 2 = 0');
	cmp_ok(spill_files($primary, $pid), '>', 0, "$phase: the held update has spill files");
	cancel_held($primary, $pid);
	my $after = $held->query('SELECT format($$%s %s %s$$, count(*), sum(a), sum(b)) FROM big');
	like($held->{stderr}, qr/canceling statement due to user request/,
		"$phase: the cancel reaches the client");
	is(spill_files($primary, $pid), '0', "$phase: no spill files after the cancel");
	is($after, $big_before, "$phase: no row deleted or added, the session works");
	$held->quit;
}

# --- crashes and a standby ---------------------------------------------------------------------

my $fingerprint = q{
	SELECT format('%s %s %s', count(*), sum(a), md5(string_agg(a::text || b, ',' ORDER BY a, b)))
	FROM t};
$primary->safe_psql('postgres', q{
	DELETE FROM t WHERE a % 10 = 0;
	UPDATE t SET a = a + 100000, b = 'moved' WHERE a % 10 = 5;
});
my $bg = $primary->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe('DELETE FROM t WHERE a % 10 = 1');
$bg->query_safe("UPDATE t SET b = 'uncommitted' WHERE a % 10 = 2");
my $before_crash = $primary->safe_psql('postgres', $fingerprint);
like($before_crash, qr/^8997 /, '8997 rows after the committed deletes and updates');
$primary->stop('immediate');
$bg->quit;
$primary->start;
is($primary->safe_psql('postgres', $fingerprint), $before_crash,
	'after an immediate shutdown: committed deletes and updates hold, uncommitted ones do not');
is($primary->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SET xxl.ordered_scan = off;
	SELECT count(*) FROM u WHERE k > 0}), '100', 'the indexed table after the crash');
$primary->safe_psql('postgres', 'DELETE FROM t WHERE a > 100000');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $fingerprint), $primary->safe_psql('postgres', $fingerprint),
	'the standby sees the same rows after deletes, updates and a crash');
like($standby->safe_psql('postgres', $fingerprint), qr/^7997 /, '7997 rows');

$standby->stop;
$primary->stop;

# --- wal_level = minimal: a table created in the transaction is synced at commit -------------

my $minimal = PostgreSQL::Test::Cluster->new('minimal');
$minimal->init;
$minimal->append_conf('postgresql.conf',
	"wal_level = minimal\nmax_wal_senders = 0\nwal_skip_threshold = 0\n");
$minimal->start;
$minimal->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE old (a int, b text) USING xxl;
	INSERT INTO old SELECT g, 'old ' || g FROM generate_series(1, 20000) g;
});
my $lsn0 = $minimal->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$minimal->safe_psql('postgres', q{
	BEGIN;
	CREATE TABLE t (a int, b text) USING xxl;
	SELECT xxl.alter_table_set('t', 'a');
	INSERT INTO t SELECT (g * 7919) % 100003, 'row ' || g FROM generate_series(1, 100000) g;
	DELETE FROM t WHERE a % 10 = 0;
	UPDATE t SET a = -a WHERE a % 10 = 5;
	COMMIT;
});
my $wal = $minimal->safe_psql('postgres', "SELECT pg_current_wal_insert_lsn() - '$lsn0'::pg_lsn");
cmp_ok($wal, '<', 1024 * 1024, "minimal: the new table's rows, deletes and updates wrote hardly any WAL ($wal bytes)");
# a table from before: its deletes and updates are logged
$minimal->safe_psql('postgres', q{
	DELETE FROM old WHERE a % 3 = 0;
	UPDATE old SET b = 'updated' WHERE a % 3 = 1;
});
my $both = q{
	SELECT format('%s %s %s / %s %s', count(*), sum(a), md5(string_agg(a::text || b, ',' ORDER BY a, b)),
		(SELECT count(*) FROM old), (SELECT count(*) FROM old WHERE b = 'updated'))
	FROM t};
my $want = $minimal->safe_psql('postgres', $both);
like($want, qr{^90000 .* / 13334 6667$}, 'minimal: 90000 rows in the new table, 13334 in the old one');
$minimal->stop('immediate');
$minimal->start;
is($minimal->safe_psql('postgres', $both), $want,
	'minimal: both tables survive a crash right after the commits');

done_testing();
