# 060_table.pl — what the table access method xxl must hold beyond one
# session (docs/table.md): committed rows survive a crash and uncommitted
# ones do not, a streaming standby sees the same rows, concurrent sessions
# inserting into one table lose nothing, a cancel in the middle of a large
# sorted insert (while rows are collected, and while its segment is
# written) leaves nothing behind, and pg_dump -Fc / pg_restore keep the
# rows and the order key.  Run by `make test` (scripts/test.sh).
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
	CREATE TABLE t (a bigint, b text) USING xxl;
	SELECT xxl.alter_table_set('t', 'a');
	INSERT INTO t SELECT (g * 7919) % 100003, 'row ' || g FROM generate_series(1, 100000) g;
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# a fingerprint of the table's rows and of their order
my $fingerprint = q{
	SELECT format('%s %s %s', count(*), sum(a), md5(string_agg(a::text || b, ',' ORDER BY ctid)))
	FROM t};

# --- a standby ---------------------------------------------------------------------

$primary->safe_psql('postgres',
	"INSERT INTO t SELECT g, 'second ' || g FROM generate_series(1, 5000) g");
$primary->wait_for_catchup($standby);
my $on_primary = $primary->safe_psql('postgres', $fingerprint);
is($standby->safe_psql('postgres', $fingerprint), $on_primary,
	'the standby sees the same rows in the same order');
like($on_primary, qr/^105000 /, '105000 rows');

# --- large segments: their pages go to the file directly (smgrextend), WAL-logged whole --

# over 8 MB of records: the statement's segment bypasses shared buffers
my $big = q{SELECT format('%s %s %s', count(*), sum(a), md5(string_agg(a::text || ':' || b, ',' ORDER BY ctid))) FROM tbig};
$primary->safe_psql('postgres', q{
	CREATE TABLE tbig (a bigint, b bigint) USING xxl;
	SELECT xxl.alter_table_set('tbig', 'a');
	INSERT INTO tbig SELECT (g::bigint * 7919) % 1000003, g FROM generate_series(1, 1000000) g;
});
my $big_before = $primary->safe_psql('postgres', $big);
is($primary->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT a, lag(a) OVER () AS p FROM tbig) s WHERE p > a}), '0',
	'a large segment: its rows in key order');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $big), $big_before, 'a large segment: the standby has the same rows');

# --- crashes -----------------------------------------------------------------------

# a table with an index: its rows go to shared pages as they come
$primary->safe_psql('postgres', q{
	CREATE TABLE ti (a int, b text) USING xxl;
	CREATE UNIQUE INDEX ti_a ON ti (a);
	INSERT INTO ti SELECT g, md5(g::text) FROM generate_series(1, 3000) g;
});
my $indexed = q{
	SET enable_seqscan = off;
	SET xxl.ordered_scan = off;
	SELECT format('%s %s', count(*), sum(a)) FROM ti WHERE a > 0;
	RESET enable_seqscan;
	SELECT format('%s %s', count(*), sum(a)) FROM ti};

# an insert whose statement ended (its segment is written) but whose
# transaction did not commit
my $bg = $primary->background_psql('postgres');
$bg->query_safe('BEGIN');
$bg->query_safe("INSERT INTO t SELECT g, 'uncommitted' FROM generate_series(1, 20000) g");
$bg->query_safe("INSERT INTO ti SELECT g, 'uncommitted' FROM generate_series(3001, 9000) g");
$bg->query_safe("INSERT INTO tbig SELECT g, -g FROM generate_series(1, 1000000) g");
$primary->safe_psql('postgres',
	"INSERT INTO t SELECT g, 'committed' FROM generate_series(1, 3000) g");
my $before_crash = $primary->safe_psql('postgres', $fingerprint);
$primary->stop('immediate');
$bg->quit;
$primary->start;
is($primary->safe_psql('postgres', $fingerprint), $before_crash,
	'after an immediate shutdown: committed rows are there, uncommitted ones are not');
is($primary->safe_psql('postgres', "SELECT count(*) FROM t WHERE b = 'uncommitted'"),
	'0', 'no row of the transaction that did not commit');
is($primary->safe_psql('postgres', $indexed), "3000 4501500\n3000 4501500",
	'the indexed table after the crash: the same committed rows by index and by scan');
is($primary->safe_psql('postgres', $big), $big_before,
	'a large segment after the crash: its committed rows, not the uncommitted large one');
$primary->safe_psql('postgres', "INSERT INTO ti SELECT g, 'again' FROM generate_series(3001, 4000) g");
$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT g, 'after' FROM generate_series(1, 1000) g;
	VACUUM t;
});
is($primary->safe_psql('postgres', "SELECT count(*) FROM t WHERE b = 'after'"),
	'1000', 'inserts and VACUUM work after recovery');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $fingerprint), $primary->safe_psql('postgres', $fingerprint),
	'the standby follows through the crash');
is($standby->safe_psql('postgres', $indexed), "4000 8002000\n4000 8002000",
	'the standby answers the indexed table by index and by scan');

# --- concurrent inserts ---------------------------------------------------------------

# (100 inserts make 100 segments: the NOTICE that suggests compaction is silenced)
$primary->safe_psql('postgres', 'CREATE TABLE c (client int, n int) USING xxl');
$primary->pgbench(
	'--no-vacuum --client=4 --transactions=25',
	0,
	[qr{processed: 100/100}],
	[qr{^$}],
	'4 clients insert into one xxl table',
	{
		'060_insert' => q{
			SET client_min_messages = warning;
			INSERT INTO c SELECT :client_id, g FROM generate_series(1, 200) g;
			BEGIN;
			INSERT INTO c SELECT :client_id, -g FROM generate_series(1, 10) g;
			ROLLBACK;
		}
	});
is($primary->safe_psql('postgres', q{
	SELECT string_agg(format('%s:%s:%s', client, cnt, total), ' ' ORDER BY client)
	FROM (SELECT client, count(*) AS cnt, sum(n) AS total FROM c GROUP BY client) s}),
	join(' ', map { "$_:5000:502500" } 0 .. 3),
	'every committed row of every client once, no rolled-back row');

# --- cancel ------------------------------------------------------------------------------


my $count_before = $primary->safe_psql('postgres', 'SELECT count(*) FROM t');
# input: while rows are collected; merge: while they are sorted at the
# statement's end; output: while the segment's pages are written
for my $phase ('input', 'merge', 'output')
{
	my ($held, $pid) = start_held($primary, $phase, ["SET xxl.memory = '1MB'"],
		"INSERT INTO t SELECT (g * 31) % 1000003, md5(g::text) FROM generate_series(1, 300000) g");
	cmp_ok(spill_files($primary, $pid), '>', 0, "$phase: the held insert has spill files") if $phase ne 'input';
	cancel_held($primary, $pid);
	my $count = $held->query('SELECT count(*) FROM t');
	like($held->{stderr}, qr/canceling statement due to user request/,
		"$phase: the cancel reaches the client");
	$held->{stderr} = '';
	is(spill_files($primary, $pid), '0', "$phase: no spill files after the cancel");
	is($count, $count_before, "$phase: no row of the canceled insert, the session works");
	$held->quit;
}

# --- pg_dump and pg_restore ---------------------------------------------------------------

# A row the drop hook could not see (a crashed backend's temporary table, which
# another backend drops) must not be dumped as a bare OID, nor one of a
# temporary table still there: pg_dump's condition on xxl.table_options.
$primary->safe_psql('postgres', q{
	INSERT INTO xxl.table_options VALUES (4294967000, 'gone');
	CREATE TABLE t_renamed (a bigint, b bigint) USING xxl;
	SELECT xxl.alter_table_set('t_renamed', 'b DESC');
	ALTER TABLE t_renamed RENAME COLUMN b TO "B b";
});
my $dump = $primary->basedir . '/xxl.dump';
$primary->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-d', $primary->connstr('postgres') ],
	'pg_dump -Fc');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok(
	[ 'pg_restore', '-d', $primary->connstr('restored'), $dump ],
	'pg_restore');
is($primary->safe_psql('restored', $fingerprint), $primary->safe_psql('postgres', $fingerprint),
	'the restored table has the same rows');
is($primary->safe_psql('restored', q{
	SELECT format('%s %s', (SELECT amname FROM pg_am a JOIN pg_class r ON r.relam = a.oid WHERE relname = 't'),
		(SELECT order_by FROM xxl.table_options WHERE relation = 't'::regclass))}),
	'xxl a', 'the restored table is an xxl table with its order key');
is($primary->safe_psql('restored', 'SELECT relation::text || \': \' || order_by FROM xxl.table_options ORDER BY 1'),
	"t: a\nt_renamed: \"B b\" DESC\ntbig: a",
	'the restored keys: the renamed key column by its new name, no row of a dropped table');

# --- the metapage's format version ------------------------------------------------------

# A table whose metapage names a format this library does not write is not
# read by guesswork: 0A000 with the versions, and nothing is lost.
$primary->safe_psql('postgres', q{
	CREATE TABLE t_format (a bigint) USING xxl;
	INSERT INTO t_format SELECT generate_series(1, 1000);
	CHECKPOINT;
});
my $meta_file = $primary->data_dir . '/'
  . $primary->safe_psql('postgres', q{SELECT pg_relation_filepath('t_format')});
# XxlMeta after the 24-byte page header: magic, then the version
sub set_format_version
{
	my ($file, $version) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	seek($fh, 28, 0) or die;
	my $old;
	read($fh, $old, 4) == 4 or die;
	seek($fh, 28, 0) or die;
	print $fh pack('V', $version);
	close($fh) or die;
	return unpack('V', $old);
}
$primary->stop;
is(set_format_version($meta_file, 2), 1, 'the metapage says format version 1');
$primary->start;
my ($ret, $out, $err) = $primary->psql('postgres', "\\set VERBOSITY verbose\nSELECT count(*) FROM t_format");
like($err, qr/0A000: xxl table "t_format" has format version 2, this pgxxl library reads version 1/,
	'a later format version is refused with 0A000');
$primary->stop;
set_format_version($meta_file, 1);
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t_format'), '1000',
	'the table reads again under its own version');

done_testing();
