# 050_output_pages.pl — the _into functions write their new tables page by
# page outside shared buffers (src/pg/io/xxl_heap_pages.c).  That must be as
# durable and as replicable as heap_insert():
#  - wal_level = replica: the pages are WAL-logged, so a streaming standby
#    gets exactly the primary's tables, and a crash right after the commit
#    (immediate stop) loses nothing;
#  - wal_level = minimal: no WAL, the commit syncs the new files, so a crash
#    right after the commit loses nothing either;
#  - a rolled-back call leaves no table and no relation file behind;
#  - a table over 1 GB gets its second segment file as md.c would make it.
# Each table's content is compared with what ORDER BY (or a second run)
# gives, by an md5 over its rows in physical order.
# Run by `make test` (scripts/test.sh) as the postgres user.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Rows of the source and what each target must hold, in physical order.
my $setup = q{
	CREATE EXTENSION pgxxl;
	SELECT setseed(0.3);
	CREATE TABLE src AS
	SELECT g AS id, (random() * 1e9)::bigint AS a, md5(g::text) AS t,
	       CASE WHEN g % 1000 = 0 THEN repeat(md5(g::text), 200) END AS wide
	FROM generate_series(1, 300000) g;
	CREATE TABLE edges AS
	SELECT g AS id, (g * 7) % 50000 AS source, (g * 13) % 50000 AS target
	FROM generate_series(1, 100000) g;
	CREATE TABLE corpus AS SELECT string_agg(md5(g::text), '') AS body FROM generate_series(1, 20000) g;
};

my $fill = q{
	SET xxl.memory = '4MB';
	SELECT xxl.sort_into('src', 'a, id', 'by_a');               -- variable records, some toasted
	SELECT xxl.sort_into('SELECT id, a FROM src', 'a DESC, id', 'by_a_fixed');  -- fixed records
	SELECT xxl.connected_components_into('edges', 'cc');
	SELECT xxl.suffix_array_into('corpus', 'sa');
	LOAD 'pgxxl';
	SET xxl.sort_in_plans_threshold = 0;
	CREATE TABLE ctas_by_a AS SELECT * FROM src ORDER BY a, id;  -- an XxlSort's rows
};

# md5 of every table's rows in physical (ctid) order
my $digest = q{
	SELECT string_agg(format('%s=%s', name, md5), ' ' ORDER BY name) FROM (
	  SELECT 'by_a' AS name, md5(string_agg(t::text, '|' ORDER BY ctid)) FROM by_a t
	  UNION ALL SELECT 'by_a_fixed', md5(string_agg(t::text, '|' ORDER BY ctid)) FROM by_a_fixed t
	  UNION ALL SELECT 'cc', md5(string_agg(t::text, '|' ORDER BY ctid)) FROM cc t
	  UNION ALL SELECT 'ctas_by_a', md5(string_agg(t::text, '|' ORDER BY ctid)) FROM ctas_by_a t
	  UNION ALL SELECT 'sa', md5(string_agg(t::text, '|' ORDER BY ctid)) FROM sa t) d
};

# what the sorted tables must hold, from ORDER BY
my $oracle = q{
	SELECT format('%s %s %1$s',
	  md5(string_agg(t::text, '|' ORDER BY a, id)),
	  (SELECT md5(string_agg(s::text, '|' ORDER BY a DESC, id)) FROM (SELECT id, a FROM src) s))
	FROM src t
};
my $sorted = q{
	SELECT format('%s %s %s',
	  (SELECT md5(string_agg(t::text, '|' ORDER BY ctid)) FROM by_a t),
	  (SELECT md5(string_agg(t::text, '|' ORDER BY ctid)) FROM by_a_fixed t),
	  (SELECT md5(string_agg(t::text, '|' ORDER BY ctid)) FROM ctas_by_a t))
};

# --- wal_level = replica, with a streaming standby ------------------------------------

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# Reading a new table sets hint bits; with wal_log_hints (which the test
# cluster turns on for streaming) that logs full pages, which would hide
# pages the writer failed to log.  So: off, and the standby reads first.
$primary->append_conf('postgresql.conf', "synchronize_seqscans = off\nwal_log_hints = off\n");
$primary->start;
$primary->safe_psql('postgres', $setup);
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', $fill);
is($primary->safe_psql('postgres', 'SHOW wal_level'), 'replica', 'the primary logs for replicas');
$primary->wait_for_catchup($standby);
my $on_standby = $standby->safe_psql('postgres', $digest);

is($primary->safe_psql('postgres', $sorted), $primary->safe_psql('postgres', $oracle),
	'replica: the sorted tables hold ORDER BY\'s rows in its order');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM sa'), '640000', 'replica: a suffix array row per byte');
my $want = $primary->safe_psql('postgres', $digest);
is($on_standby, $want, 'the standby has exactly the primary\'s new tables');

$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $digest), $want, 'replica: the tables survive a crash right after the commit');

# a rolled-back call: no table, no file
my $files_before = $primary->safe_psql('postgres',
	q{SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database WHERE datname = current_database()))});
$primary->safe_psql('postgres', q{
	BEGIN;
	SELECT xxl.sort_into('src', 'a', 'gone');
	ROLLBACK;
	CHECKPOINT;
});
is($primary->safe_psql('postgres', q{SELECT to_regclass('gone') IS NULL}), 't', 'a rolled-back call leaves no table');
is($primary->safe_psql('postgres',
	q{SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database WHERE datname = current_database()))}),
	$files_before, 'a rolled-back call leaves no relation file');

$standby->stop;
$primary->stop;

# --- wal_level = minimal: no WAL for the new tables, synced at commit --------------

my $minimal = PostgreSQL::Test::Cluster->new('minimal');
$minimal->init;
$minimal->append_conf('postgresql.conf',
	"wal_level = minimal\nmax_wal_senders = 0\nsynchronize_seqscans = off\n"
	  . "wal_skip_threshold = 0\n");
$minimal->start;
$minimal->safe_psql('postgres', $setup);
my $lsn0 = $minimal->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$minimal->safe_psql('postgres', $fill);
my $wal = $minimal->safe_psql('postgres', "SELECT pg_current_wal_insert_lsn() - '$lsn0'::pg_lsn");
cmp_ok($wal, '<', 4 * 1024 * 1024, "minimal: the new tables wrote hardly any WAL ($wal bytes)");
is($minimal->safe_psql('postgres', $sorted), $minimal->safe_psql('postgres', $oracle),
	'minimal: the sorted tables hold ORDER BY\'s rows in its order');
$want = $minimal->safe_psql('postgres', $digest);

# A table over 1 GB spans two segment files, which the writer creates itself
# (md.c's layout); a suffix array is the cheapest way to get one: 44 bytes
# of heap per byte of text.
$minimal->safe_psql('postgres', q{
	CREATE TABLE bigc AS
	SELECT g AS id, string_agg(md5((g * 1000 + h)::text), '') AS body
	FROM generate_series(1, 25) g, generate_series(1, 32000) h GROUP BY g;
});
my $bigcorpus = 'SELECT body FROM bigc ORDER BY id';
my $dir = q{'base/' || (SELECT oid FROM pg_database WHERE datname = current_database())};
$files_before = $minimal->safe_psql('postgres', "SELECT count(*) FROM pg_ls_dir($dir)");
$minimal->safe_psql('postgres', qq{
	BEGIN;
	SELECT xxl.suffix_array_into('$bigcorpus', 'gone_big');
	ROLLBACK;
	CHECKPOINT;
});
is($minimal->safe_psql('postgres', "SELECT count(*) FROM pg_ls_dir($dir)"), $files_before,
	'minimal: a rolled-back call over 1 GB leaves no segment file');
is($minimal->safe_psql('postgres', qq{SELECT xxl.suffix_array_into('$bigcorpus', 'bigsa')}),
	'25600000', 'minimal: a suffix array of 25.6 MB');
is($minimal->safe_psql('postgres', q{
	SELECT pg_relation_size('bigsa') > 1024 * 1024 * 1024
	   AND (pg_stat_file(pg_relation_filepath('bigsa') || '.1')).size
	       = pg_relation_size('bigsa') - 1024 * 1024 * 1024}),
	't', 'minimal: its table spans two segment files, the first one full');

$minimal->stop('immediate');
$minimal->start;
is($minimal->safe_psql('postgres', $digest), $want, 'minimal: the tables survive a crash right after the commit');
is($minimal->safe_psql('postgres', qq{SELECT xxl.suffix_array_check('$bigcorpus', 'bigsa')}), 't',
	'minimal: the table over two segments holds the suffix array after a crash');
$minimal->stop;

done_testing();
