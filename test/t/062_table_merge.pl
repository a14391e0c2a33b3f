# 062_table_merge.pl — VACUUM's merge of the segments at an xxl table's end
# (docs/table.md, "Merging small segments") on shared tables: a table in
# use is not merged, nor are rows a running snapshot may not see yet; a
# standby replays merges to the same rows; a merge canceled or cut short by
# a crash after any of its steps leaves the rows and the indexes right, and
# the next VACUUM merges; autovacuum merges a table fed one row per
# statement.  Steps are reached with xxl.test_hold, never by sleeping.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlHold;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# autovacuum only for its own test at the end: its ANALYZE of another table
# would hold back the horizon of the VACUUMs before
$primary->append_conf('postgresql.conf', q{
autovacuum = off
autovacuum_naptime = 1
});
$primary->start;
$primary->safe_psql('postgres', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE s (k int PRIMARY KEY, v text) USING xxl WITH (autovacuum_enabled = off);
	SELECT xxl.alter_table_set('s', 'k');
	CREATE TABLE s_h (k int PRIMARY KEY, v text);
	CREATE PROCEDURE rows_in(first int, last int) LANGUAGE plpgsql AS $$
	BEGIN
		FOR i IN first..last LOOP
			INSERT INTO s VALUES (i, 'v' || i); INSERT INTO s_h VALUES (i, 'v' || i);
			IF i % 10 = 0 THEN DELETE FROM s WHERE k = i - 7; DELETE FROM s_h WHERE k = i - 7; END IF;
			COMMIT;
		END LOOP;
	END $$;
	CALL rows_in(1, 300);
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

sub pages
{
	my ($table) = @_;
	return $primary->safe_psql('postgres', "SELECT pg_relation_size('$table') / 8192");
}

# rows, and rows through the primary key, against the heap twin: "0 0 t"
my $same = q{
	SELECT (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM s_h) a) || ' ' ||
	       (SELECT count(*) FROM (SELECT * FROM s_h EXCEPT ALL SELECT * FROM s) b) || ' ' ||
	       ((SELECT count(*) FROM s WHERE k BETWEEN 1 AND 1000000) = (SELECT count(*) FROM s_h))};
my $by_index = 'SET enable_seqscan = off; SET enable_bitmapscan = off;';

sub check_same
{
	my ($what) = @_;
	is($primary->safe_psql('postgres', "$by_index $same"), '0 0 true', "$what: the rows are right");
}

# --- a table in use is not merged ----------------------------------------------------------

my $before = pages('s');
my $reader = $primary->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN');
$reader->query_safe('SELECT count(*) FROM s');
my ($rc, $out, $err) = $primary->psql('postgres', 'VACUUM (VERBOSE) s');
like($err, qr/segments not merged, the table is in use/, 'VACUUM says a table in use is not merged');
is(pages('s'), $before, 'a table in use keeps its pages');
$reader->query_safe('COMMIT');

# --- rows a running snapshot may not see are not merged -------------------------------------

$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $seen = $reader->query_safe('SELECT count(*) FROM s_h');
$primary->safe_psql('postgres', 'CALL rows_in(301, 330)');
$primary->safe_psql('postgres', 'VACUUM s');
is(pages('s'), $before + 30 + 3, 'the newest segments, which an older snapshot does not see, stay');
is($reader->query_safe('SELECT count(*) FROM s'), $seen, 'the older snapshot still sees its rows');
$reader->query_safe('COMMIT');
$reader->quit;

($rc, $out, $err) = $primary->psql('postgres', 'VACUUM (VERBOSE) s');
like($err, qr/merged 363 segments into 1/, 'then VACUUM merges them');
cmp_ok(pages('s'), '<', 10, 'the file shrinks to the merged segment');
check_same('after the merge');

$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "$by_index $same"), '0 0 true', 'a standby replays the merge to the same rows');

# --- a merge stopped after each of its steps --------------------------------------------------

my $n = 330;
for my $phase (qw(input merge output))
{
	for my $how (qw(cancel crash))
	{
		$primary->safe_psql('postgres', 'CALL rows_in(' . ($n + 1) . ', ' . ($n + 40) . ')');
		$n += 40;
		my ($bg, $pid) = start_held($primary, $phase, [], 'VACUUM s');
		if ($how eq 'cancel')
		{
			cancel_held($primary, $pid);
			$bg->quit;
		}
		else
		{
			$primary->stop('immediate');
			# its server is gone: psql may be gone too
			eval { $bg->quit };
			$primary->start;
		}
		check_same("$how after the $phase step");
		$primary->safe_psql('postgres', 'VACUUM s');
		check_same("$how after the $phase step, then VACUUM");
		is($primary->safe_psql('postgres',
				'SELECT count(*) FROM s WHERE k = ' . ($n - 1)), '1',
			"$how after the $phase step: the newest row is found by its key");
	}
}
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "$by_index $same"), '0 0 true',
	'the standby has the same rows after the stopped merges');

# --- autovacuum merges a table fed one row per statement ---------------------------------------

$primary->safe_psql('postgres', 'ALTER SYSTEM SET autovacuum = on');
$primary->reload;
$primary->safe_psql('postgres', q{
	CREATE TABLE a (k int, v text) USING xxl
		WITH (autovacuum_vacuum_insert_threshold = 100, autovacuum_vacuum_insert_scale_factor = 0);
	DO $$ BEGIN FOR i IN 1..400 LOOP INSERT INTO a VALUES (i, 'v' || i); END LOOP; END $$;
});
# (polled without opening a: a reader's lock makes the merge wait for the
# next autovacuum, which comes only after more inserts)
ok($primary->poll_query_until('postgres',
		"SELECT autovacuum_count > 0 FROM pg_stat_user_tables WHERE relname = 'a'"),
	'autovacuum vacuums the table of single-row inserts');
cmp_ok(pages('a'), '<', 20, 'and merges its segments');
is($primary->safe_psql('postgres', 'SELECT count(*), sum(k) FROM a'), '400|80200',
	'with the rows all there');

$standby->stop;
$primary->stop;
done_testing();
