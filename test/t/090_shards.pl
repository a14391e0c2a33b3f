# 090_shards.pl — sorts of a table sharded with postgres_fdw: a coordinator
# and three shard servers, a range-partitioned table with one local
# partition and three foreign ones (the last empty), random rows with NULLs,
# duplicates and text keys in the database's collation, "C" and en_US.
# xxl.sort and xxl.sort_into of the sharded table give the rows of ORDER BY
# over the same rows in one local table, at a budget far below them, as an
# ordinary role, merged, or by the range key read in the partitions' order,
# the shards' rows packed (one by one from a shard whose pgxxl is older);
# ORDER BY in plans runs through XxlShardMerge and XxlShardAppend; every shard is held inside its sort at the same moment
# (xxl.test_hold on the shards), and a cancel on the coordinator ends all
# of them with no spill file anywhere; a shard stopped before or during the
# call, a shard without pgxxl, a collation a shard lacks or defines
# otherwise, a user without a user mapping or without SELECT each end the
# call with a clear error.  Run by `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlShards;

my ($coord, @shards) = start_shards('alice');

# each shard: its partition's tables
$_->safe_psql('postgres', q{
	CREATE TABLE part (id bigint, k bigint, t text, u text, n numeric);
	CREATE TABLE part_empty (LIKE part);
	GRANT SELECT, INSERT ON part, part_empty TO fdw_user;
}) for @shards;

# the coordinator: the sharded table, the same rows in one local table, an
# ordinary role that may read the sharded table through user mappings and
# one without any
$coord->safe_psql('postgres', qq{
	CREATE ROLE bob LOGIN;
	CREATE TABLE sharded (id bigint, gone int, k bigint, t text, u text COLLATE "C", n numeric)
		PARTITION BY RANGE (id);
	ALTER TABLE sharded DROP COLUMN gone;
	CREATE TABLE p0 PARTITION OF sharded FOR VALUES FROM (MINVALUE) TO (15000);
	CREATE FOREIGN TABLE p1 PARTITION OF sharded FOR VALUES FROM (15000) TO (30000)
		SERVER s1 OPTIONS (table_name 'part');
	CREATE FOREIGN TABLE p2 PARTITION OF sharded FOR VALUES FROM (30000) TO (45000)
		SERVER s2 OPTIONS (table_name 'part');
	CREATE FOREIGN TABLE p3 PARTITION OF sharded FOR VALUES FROM (45000) TO (60000)
		SERVER s3 OPTIONS (table_name 'part');
	CREATE FOREIGN TABLE p4 PARTITION OF sharded FOR VALUES FROM (60000) TO (MAXVALUE)
		SERVER s3 OPTIONS (table_name 'part_empty');
	SELECT setseed(0.5);
	CREATE TABLE flat AS
	SELECT g AS id,
		   CASE WHEN g % 17 = 0 THEN NULL ELSE (random() * 5000)::bigint END AS k,
		   CASE WHEN g % 13 = 0 THEN NULL ELSE md5((g % 9000)::text) || md5(g::text) END AS t,
		   CASE WHEN g % 11 = 0 THEN NULL
				ELSE (ARRAY['a', 'B', 'b', 'Ä', 'z', ''])[1 + g % 6] || (g % 300) END AS u,
		   round((random() * 100)::numeric, 2) AS n
	FROM generate_series(1, 59999) g;
	INSERT INTO sharded SELECT * FROM flat;
	GRANT SELECT ON sharded, flat TO alice;
	GRANT CREATE ON SCHEMA public TO alice;
});
is($coord->safe_psql('postgres', q{
	SELECT string_agg(p || ' ' || n, ' ' ORDER BY p)
	FROM (SELECT tableoid::regclass::text p, count(*) n FROM sharded GROUP BY 1) c}),
	'p0 14999 p1 15000 p2 15000 p3 15000',
	'the rows are spread over the local partition and three shards; the third shard\'s second partition is empty');

# the same digest of a sort's rows as of ORDER BY's, at a budget far below them
sub digest
{
	my ($from) = @_;
	return "SELECT count(*) || ' ' || md5(string_agg(concat_ws('|', id, k, t, u, n), ',')) FROM ($from) s";
}
my @keys = ('k, id', 't, id', 'u DESC NULLS FIRST, id', 'n, t COLLATE "en_US.utf8" DESC, id',
	'k DESC NULLS LAST, u, t COLLATE "C", id', 'id');
my $cols = 'id bigint, k bigint, t text, u text COLLATE "C", n numeric';
for my $key (@keys)
{
	my ($sharded, $stats, $oracle) = split /\n/, $coord->safe_psql('postgres', qq{
		SET xxl.memory = '1MB';
		@{[ digest("SELECT * FROM xxl.sort('sharded', \$k\$$key\$k\$) AS s($cols)") ]};
		SELECT details::json->'streams' || ' ' || (SELECT sum((s->>'rows')::int) FROM json_array_elements(details::json->'shards') s)
			|| ' ' || (details::json->>'local_rows') || ' ' || coalesce(details::json->>'streams_in_order', 'merged')
			|| ' ' || (SELECT string_agg(coalesce(s->>'packed', 'false'), ',') FROM json_array_elements(details::json->'shards') s)
		FROM xxl.last_stats();
		@{[ digest("SELECT * FROM flat ORDER BY $key") ]};
	}, extra_params => [ '-U', 'alice' ]);
	is($sharded, $oracle, "xxl.sort of the sharded table by $key: the rows of ORDER BY");
	# (by id, the range partitions' key, their sorted rows follow one another)
	is($stats, '4 45000 14999 ' . ($key eq 'id' ? 'true' : 'merged') . ' true,true,true',
		"... three shards (one statement each, its rows packed) and the local partition, each counted, " .
		($key eq 'id' ? 'read in the partitions\' order' : 'merged'));
}
my ($into, $oracle) = split /\n/, $coord->safe_psql('postgres', qq{
	SET xxl.memory = '1MB';
	SELECT xxl.sort_into('sharded', 't COLLATE "C" DESC, k, id', 'sorted');
	@{[ digest("TABLE sorted") ]};
}, extra_params => [ '-U', 'alice' ]);
is($into, 59999, 'sort_into of the sharded table: every row');
is($oracle, $coord->safe_psql('postgres', digest('SELECT * FROM flat ORDER BY t COLLATE "C" DESC, k, id')),
	'... in the order of ORDER BY');
is($coord->safe_psql('postgres', digest("SELECT * FROM xxl.sort(NULL::sharded, 'k, id')")),
	$coord->safe_psql('postgres', digest('SELECT * FROM flat ORDER BY k, id')),
	'the typed form, with the parent\'s dropped column');
# booleans, integers and floats are read from the blocks without their
# receive functions: the rows of ORDER BY, with NULLs, -0, NaN, infinities
# and the ends of the integers' ranges
$_->safe_psql('postgres', q{
	CREATE TABLE tpart (id int, s smallint, f4 real, f8 double precision, b boolean);
	GRANT SELECT, INSERT ON tpart TO fdw_user;
}) for @shards;
$coord->safe_psql('postgres', q{
	CREATE TABLE typed (id int, s smallint, f4 real, f8 double precision, b boolean) PARTITION BY RANGE (id);
	CREATE TABLE t0 PARTITION OF typed FOR VALUES FROM (MINVALUE) TO (1000);
	CREATE FOREIGN TABLE t1 PARTITION OF typed FOR VALUES FROM (1000) TO (2000) SERVER s1 OPTIONS (table_name 'tpart');
	CREATE FOREIGN TABLE t2 PARTITION OF typed FOR VALUES FROM (2000) TO (3000) SERVER s2 OPTIONS (table_name 'tpart');
	CREATE FOREIGN TABLE t3 PARTITION OF typed FOR VALUES FROM (3000) TO (MAXVALUE) SERVER s3 OPTIONS (table_name 'tpart');
	CREATE TABLE tflat AS
	SELECT CASE WHEN g = 3999 THEN 2147483647 ELSE g END AS id,
		   CASE g % 7 WHEN 0 THEN NULL WHEN 1 THEN -32768 WHEN 2 THEN 32767 ELSE g % 500 - 250 END::smallint AS s,
		   CASE g % 6 WHEN 0 THEN NULL WHEN 1 THEN '-0' WHEN 2 THEN 'NaN' WHEN 3 THEN '-Infinity'
				ELSE ((g % 97) / 7.0)::text END::real AS f4,
		   CASE g % 5 WHEN 0 THEN NULL WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity' ELSE (g / 3.0 - 600)::text END::float8 AS f8,
		   CASE g % 3 WHEN 0 THEN NULL ELSE g % 2 = 0 END AS b
	FROM generate_series(1, 3999) g;
	INSERT INTO typed SELECT * FROM tflat;
});
sub typed_digest
{
	my ($from) = @_;
	return "SELECT count(*) || ' ' || md5(string_agg(concat_ws('|', id, s, f4, f8, b), ',')) FROM ($from) x";
}
like($coord->safe_psql('postgres', q{SET xxl.sort_in_plans_threshold = 0;
	EXPLAIN (COSTS OFF) SELECT * FROM typed ORDER BY f8, id}), qr/XxlShardMerge/,
	'ORDER BY over the typed shards runs through XxlShardMerge');
for my $key ('f8, id', 'f4 DESC, s, id', 'b, s DESC, id')
{
	my ($sharded, $packed, $planned, $oracle) = split /\n/, $coord->safe_psql('postgres', qq{
		@{[ typed_digest("SELECT * FROM xxl.sort('typed', '$key') AS x(id int, s smallint, f4 real, f8 float8, b boolean)") ]};
		SELECT string_agg(coalesce(s->>'packed', 'false'), ',') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s;
		SET xxl.sort_in_plans_threshold = 0;
		@{[ typed_digest("SELECT * FROM typed ORDER BY $key") ]};
		@{[ typed_digest("SELECT * FROM tflat ORDER BY $key") ]};
	});
	is("$sharded $planned $packed", "$oracle $oracle true,true,true",
		"booleans, integers and floats by $key, packed: xxl.sort and XxlShardMerge give the rows of ORDER BY");
}

is($coord->safe_psql('postgres', q{
	SET xxl.on_shards = off;
	SELECT count(*) FROM xxl.sort('sharded', 'k') AS s(id bigint, k bigint, t text, u text, n numeric);
	SELECT details::json->'shards' IS NULL FROM xxl.last_stats()}),
	"59999\nt", 'xxl.on_shards = off reads the partitions through postgres_fdw and sorts here');

# a LIMIT above the sort stops the shards' statements early: the same
# transaction then uses the connections again, through postgres_fdw
is($coord->safe_psql('postgres', qq{
	BEGIN;
	SELECT count(*) FROM (SELECT * FROM xxl.sort('sharded', 'k, id') AS s($cols) LIMIT 5) l;
	SELECT count(*) FROM sharded;
	SELECT xxl.sort_into('sharded', 'id', 'again');
	COMMIT;
	SELECT count(*) FROM again}), "5\n59999\n59999\n59999",
	'a sort stopped by a LIMIT leaves the connections usable in the same transaction');

# ORDER BY in plans: an XxlShardMerge in place of PostgreSQL's
# MergeAppend, every foreign partition's sorted scan started at once; two
# partitions on one server keep the MergeAppend, and EXPLAIN VERBOSE says why
my $plan_settings = q{SET xxl.sort_in_plans_threshold = 0; SET work_mem = '1MB';};
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM sharded ORDER BY k, id}),
	qr/Merge Append.*XxlShardMerge not used for a MergeAppend: two of its partitions are on server "s3"/s,
	'two partitions on one server: the MergeAppend stays, and EXPLAIN VERBOSE says why');
$coord->safe_psql('postgres', 'ALTER TABLE sharded DETACH PARTITION p4');
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (COSTS OFF) SELECT * FROM sharded ORDER BY k, id}),
	qr/Custom Scan \(XxlShardMerge\)\n.*Sort Key: sharded(_\d)?.k, sharded(_\d)?.id\n.*Shards Started at Once: s1, s2, s3\n.*Seq Scan on p0.*Foreign Scan on p1/s,
	'one partition per server: XxlShardMerge over the foreign scans and the local partition');
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (COSTS OFF) SELECT * FROM sharded ORDER BY k, id LIMIT 5}),
	qr/Limit\n.*Merge Append/, '... not under a Limit, where the MergeAppend reads the first rows only');
# ORDER BY the range partitions' key: PostgreSQL's ordered Append reads
# its children one after the other; XxlShardAppend starts them all at once
# and reads them in the same order
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (COSTS OFF) SELECT * FROM sharded ORDER BY id}),
	qr/Custom Scan \(XxlShardAppend\)\n\s+Shards Started at Once: s1, s2, s3\n.*p0.*Foreign Scan on p1.*Foreign Scan on p2.*Foreign Scan on p3/s,
	'ORDER BY the partitions\' range key: XxlShardAppend over the local partition and the foreign scans');
for my $key ('k, id', 't, id', 'u DESC NULLS FIRST, id', 'n, id', 'k DESC NULLS LAST, u, id', 'id', 'id DESC')
{
	my ($on, $off, $oracle) = split /\n/, $coord->safe_psql('postgres', qq{
		$plan_settings
		@{[ digest("SELECT * FROM sharded ORDER BY $key") ]};
		SET xxl.sort_in_plans = off;
		@{[ digest("SELECT * FROM sharded ORDER BY $key") ]};
		@{[ digest("SELECT * FROM flat ORDER BY $key") ]};
	}, extra_params => [ '-U', 'alice' ]);
	is($on, $oracle, "ORDER BY $key of the sharded table through XxlShardMerge: the rows of ORDER BY over one table");
	is($off, $oracle, "... which PostgreSQL's MergeAppend gives too");
}
# the foreign scans' output computed from the received row (an expression
# of its columns: their projection runs row by row) or only some of its
# columns (copied from the row)
for my $cols_out ('id, k * 2 AS k2, upper(t) AS t', 'u, id')
{
	my ($on, $oracle) = split /\n/, $coord->safe_psql('postgres', qq{
		$plan_settings
		SELECT md5(string_agg(s::text, ',')) FROM (SELECT $cols_out FROM sharded ORDER BY k, id) s;
		SET xxl.sort_in_plans = off;
		SELECT md5(string_agg(s::text, ',')) FROM (SELECT $cols_out FROM flat ORDER BY k, id) s;
	});
	is($on, $oracle, "SELECT $cols_out ... ORDER BY k, id through XxlShardMerge: the rows of one table");
}
# columns the query does not use: the planner puts NULL constants in the
# foreign scans' output, which the merge fills in without a projection
my $unused = 'SELECT count(*) || \' \' || md5(string_agg(k || \'|\' || id, \',\')) FROM (SELECT * FROM %s ORDER BY k, id OFFSET 0) s';
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (VERBOSE, COSTS OFF) @{[ sprintf($unused, 'sharded') ]}}),
	qr/XxlShardMerge.*Foreign Scan on public\.p1 .*\n\s+Output: sharded_\d+\.id, sharded_\d+\.k, NULL::text/s,
	'a foreign scan whose output holds NULL constants for the unused columns');
is($coord->safe_psql('postgres', qq{$plan_settings @{[ sprintf($unused, 'sharded') ]}}),
	$coord->safe_psql('postgres', sprintf($unused, 'flat')),
	'... merged through XxlShardMerge: the rows of one table');
# a function in the select list that reads a shard's server, called
# while the node's statement holds that server's connection: the rest of
# that shard's rows go to a temporary file first, and the connection to the
# function's query
$coord->safe_psql('postgres', q{
	CREATE FUNCTION p1_count() RETURNS bigint LANGUAGE plpgsql STABLE AS $$
	BEGIN RETURN (SELECT count(*) FROM p1); END $$;
	GRANT EXECUTE ON FUNCTION p1_count() TO alice;
	GRANT SELECT ON p1 TO alice});
my $calls = "SELECT count(*) || ' ' || sum(id) || ' ' || min(c) || ' ' || count(c) || ' ' || md5(string_agg(id::text, ',')) "
	. "FROM (SELECT id, CASE WHEN id %% 7919 = 0 THEN p1_count() END c FROM %s ORDER BY k, id) s";
my $calls_plan = $coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (COSTS OFF) @{[ sprintf $calls, 'sharded' ]}});
my ($calls_rows, $calls_stats, $calls_fn, $calls_oracle) = split /\n/, $coord->safe_psql('postgres', qq{$plan_settings
	@{[ sprintf $calls, 'sharded' ]};
	SELECT string_agg(s->>'shard', ' ') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s WHERE s->>'spooled' = 'true';
	@{[ sprintf $calls, "xxl.sort('sharded', 'k, id') AS x($cols)" ]};
	@{[ sprintf $calls, 'flat' ]}}, extra_params => [ '-U', 'alice' ]);
like($calls_plan, qr/XxlShardMerge/, 'a function in the select list that reads shard s1: still XxlShardMerge');
is($calls_rows, $calls_oracle, '... every row, in order, and the function\'s answers');
is($calls_stats, 's1', '... s1\'s rows spooled when the function first needed its connection');
# (a function scan has all of xxl.sort's rows before the select list runs)
is($calls_fn, $calls_oracle, 'the same over xxl.sort of the sharded table');
# a spool counts under temp_file_limit: 53400, nothing left behind
my ($spool_ret, $spool_out, $spool_err) = $coord->psql('postgres', qq{$plan_settings SET temp_file_limit = '64kB';
	@{[ sprintf $calls, 'sharded' ]}}, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($spool_err, qr/ERROR:  53400: temporary file size exceeds temp_file_limit/,
	'a spool beyond temp_file_limit ends the query with 53400');
is(spill_files_anywhere($coord, @shards), '0 0 0 0', '... leaving no file anywhere');
# a function whose own xxl.sort of the sharded table needs every shard's connection
$coord->safe_psql('postgres', qq{
	CREATE FUNCTION sorted_count() RETURNS bigint LANGUAGE plpgsql STABLE AS \$\$
	BEGIN RETURN (SELECT count(*) FROM xxl.sort('sharded', 'id') AS s($cols)); END \$\$;
	GRANT EXECUTE ON FUNCTION sorted_count() TO alice});
my $nested = "SELECT count(*) || ' ' || min(c) || ' ' || md5(string_agg(id::text, ',')) "
	. "FROM (SELECT id, CASE WHEN id = 7919 THEN sorted_count() END c FROM %s ORDER BY k, id) s";
my ($nested_rows, $nested_stats, $nested_oracle) = split /\n/, $coord->safe_psql('postgres', qq{$plan_settings
	@{[ sprintf $nested, 'sharded' ]};
	SELECT string_agg(s->>'shard', ' ' ORDER BY s->>'shard') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s WHERE s->>'spooled' = 'true';
	@{[ sprintf $nested, 'flat' ]}}, extra_params => [ '-U', 'alice' ]);
is($nested_rows, $nested_oracle, 'a function that sorts the sharded table itself, called during XxlShardMerge: every row, in order');
is($nested_stats, 's1 s2 s3', '... the merge\'s streams spooled for its statements');
is(spill_files_anywhere($coord, @shards), '0 0 0 0', '... and the spool files are gone');

# another scan of a shard's server in the same query (here an initPlan
# run after the merge started): the node spools that server's stream when
# it starts, and the initPlan's scan gets the connection; by the range key
# too (XxlShardAppend)
for my $key ('k, id', 'id')
{
	my $other_scan = "SELECT count(*) FROM (SELECT * FROM %s ORDER BY $key OFFSET 0) s WHERE s.k > (SELECT min(k) FROM p1)";
	my ($other_plan, $other_rows, $other_spooled, $other_oracle) = split /\n\n/, $coord->safe_psql('postgres', qq{$plan_settings
		EXPLAIN (VERBOSE, COSTS OFF) @{[ sprintf $other_scan, 'sharded' ]};
		\\echo
		@{[ sprintf $other_scan, 'sharded' ]};
		\\echo
		SELECT string_agg(s->>'shard', ' ') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s WHERE s->>'spooled' = 'true';
		\\echo
		@{[ sprintf $other_scan, 'flat' ]}});
	like($other_plan, qr/InitPlan.*Foreign Scan on public.p1.*Custom Scan \(XxlShard(Merge|Append)\)/s,
		"ORDER BY $key with another scan of a shard's server in the query: the node stays");
	is($other_rows, $other_oracle, '... and the query gives its rows');
	is($other_spooled, 's1', '... s1\'s stream spooled for the initPlan\'s scan');
}
# a join of two sorted reads of the sharded table: two nodes over the
# same servers, each spooling what the other's scans need
my $two = 'SELECT count(*) || \' \' || sum(a.k) || \' \' || sum(b.n) FROM '
	. '(SELECT id, k FROM %s ORDER BY id OFFSET 0) a JOIN (SELECT id, n FROM %s ORDER BY k, id OFFSET 0) b USING (id)';
my ($two_plan, $two_rows, $two_oracle) = split /\n\n/, $coord->safe_psql('postgres', qq{$plan_settings
	EXPLAIN (COSTS OFF) @{[ sprintf $two, 'sharded', 'sharded' ]};
	\\echo
	@{[ sprintf $two, 'sharded', 'sharded' ]};
	\\echo
	@{[ sprintf $two, 'flat', 'flat' ]}});
like($two_plan, qr/XxlShard(Merge|Append).*XxlShard(Merge|Append)/s,
	'a join of two sorted reads of the sharded table: a node on each side');
is($two_rows, $two_oracle, '... and the rows of the same join over the local copy');

# the same with xxl.sort of the sharded table, whose rows stream to the
# query's filter while the initPlan's scan of p1 needs s1's connection:
# s1's stream is spooled before the rows go out (merged, or by the range
# key with the local partition's rows first)
for my $key ('k, id', 'id')
{
	my $fn_other = "SELECT count(*) || ' ' || sum(id) FROM %s WHERE k > (SELECT min(k) FROM p1)";
	my ($fn_rows, $fn_spooled, $fn_oracle) = split /\n/, $coord->safe_psql('postgres', qq{
		@{[ sprintf $fn_other, "xxl.sort('sharded', '$key') AS s($cols)" ]};
		SELECT string_agg(s->>'shard', ' ') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s WHERE s->>'spooled' = 'true';
		@{[ sprintf $fn_other, 'flat' ]}});
	is($fn_rows, $fn_oracle, "xxl.sort of the sharded table by $key in a query whose initPlan reads p1: its rows");
	is($fn_spooled, 's1', '... s1\'s stream spooled, the connection left to the initPlan');
}
# a cursor: between its fetches, other statements read the same servers
# through the same connections, so the node reads its shards through
# postgres_fdw's cursors
is($coord->safe_psql('postgres', qq{$plan_settings
	BEGIN;
	DECLARE c CURSOR FOR SELECT id FROM sharded ORDER BY k, id;
	FETCH 2 FROM c;
	SELECT count(*) FROM p1;
	FETCH 1 FROM c;
	COMMIT}), join("\n", $coord->safe_psql('postgres', 'SELECT id FROM flat ORDER BY k, id LIMIT 2'), 15000,
		$coord->safe_psql('postgres', 'SELECT id FROM flat ORDER BY k, id OFFSET 2 LIMIT 1')),
	'a cursor over ORDER BY of the sharded table, with other statements on its servers between fetches');
is($coord->safe_psql('postgres', qq{$plan_settings
	BEGIN;
	DECLARE c CURSOR FOR SELECT id FROM sharded ORDER BY id;
	MOVE 15000 IN c;
	FETCH 2 FROM c;
	SELECT count(*) FROM p1;
	FETCH 1 FROM c;
	COMMIT}), "15001\n15002\n15000\n15003",
	'... and over ORDER BY the range key (XxlShardAppend), fetching from a shard between other statements');
# a PL/pgSQL FOR loop fetches ten rows at a time and runs its body in
# between: the node reads its shards through postgres_fdw's cursors then
$coord->safe_psql('postgres', q{
	CREATE FUNCTION loop_check() RETURNS text LANGUAGE plpgsql AS $$
	DECLARE r record; n bigint := 0; total bigint := 0; m bigint; ordered bool := true;
		pk bigint; pid bigint;
	BEGIN
		FOR r IN SELECT k, id FROM sharded ORDER BY k, id LOOP
			IF n > 0 THEN
				ordered := ordered AND CASE WHEN pk IS NULL THEN r.k IS NULL AND r.id > pid
											WHEN r.k IS NULL THEN true
											ELSE r.k > pk OR (r.k = pk AND r.id > pid) END;
			END IF;
			pk := r.k; pid := r.id; n := n + 1; total := total + r.id;
			IF n % 1000 = 1 THEN SELECT count(*) INTO m FROM p1; END IF;
		END LOOP;
		RETURN n || ' ' || ordered || ' ' || total;
	END $$});
is($coord->safe_psql('postgres', qq{$plan_settings SELECT loop_check()}),
	$coord->safe_psql('postgres', q{SELECT count(*) || ' true ' || sum(id) FROM flat}),
	'a PL/pgSQL FOR loop over ORDER BY of the sharded table, reading a shard in its body: every row, in order');
like($coord->safe_psql('postgres', qq{$plan_settings
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM sharded ORDER BY k, id;
	SELECT operator || ' ' || rows || ' ' || json_array_length(details::json->'shards') FROM xxl.last_stats()}),
	qr/Shard s1 \(partition "p1"\): 15000 rows, \d+ kB, first row after [\d.]+ ms\n.*Shard s3 \(partition "p3"\): 15000 rows.*\n.*Foreign Scan on p1 sharded_2 \(actual rows=15000 loops=1\).*\nXxlShardMerge 59999 3$/s,
	'EXPLAIN ANALYZE: each shard\'s rows and time, its scan\'s rows; last_stats per shard');
like($coord->safe_psql('postgres', qq{$plan_settings
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT * FROM sharded ORDER BY id;
	SELECT operator || ' ' || rows || ' ' || json_array_length(details::json->'shards') FROM xxl.last_stats()}),
	qr/XxlShardAppend\) \(actual rows=59999 loops=1\)\n.*Shard s2 \(partition "p2"\): 15000 rows.*\n.*Foreign Scan on p1 sharded_2 \(actual rows=15000 loops=1\).*\nXxlShardAppend 59999 3$/s,
	'... and of XxlShardAppend');

# every shard held inside its sort at once; a cancel on the coordinator
# ends them all, and no server keeps a spill file
# (at 1MB a shard's sort polls for cancels while it reads)
$_->safe_psql('postgres', q{
	ALTER ROLE fdw_user SET xxl.test_hold = 'input';
	ALTER ROLE fdw_user SET xxl.memory = '1MB'}) for @shards;
$coord->safe_psql('postgres', 'SELECT postgres_fdw_disconnect_all()');
my $bg = $coord->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM xxl.sort('sharded', 'k, id') AS s($cols);\n");
ok(wait_all_held(@shards), 'every shard is held inside its sort at the same moment');
is($coord->safe_psql('postgres', "SELECT state, wait_event FROM pg_stat_activity WHERE pid = $pid"),
	'active|Extension', 'the coordinator waits for their first rows');
$coord->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$coord->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the coordinator did not end its call';
like($bg->query('SELECT 1'), qr/^1$/m, 'the coordinator session goes on after the cancel');
ok(shards_idle($_),
	'the cancel ended the statement on ' . $_->name) for @shards;
is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'no spill file on the coordinator or any shard');

# the same for ORDER BY in a plan: each shard held inside its XxlSort
# (pgxxl loaded in the sessions of the user mappings' role)
$_->safe_psql('postgres', q{
	ALTER ROLE fdw_user SET session_preload_libraries = 'pgxxl';
	ALTER ROLE fdw_user SET xxl.sort_in_plans_threshold = 0}) for @shards;
# (new connections, which take the settings: held_order_by disconnects)
# an ORDER BY query started, every shard held inside its sort at once,
# xxl.progress meanwhile; then a cancel ends them all, leaving no spill file
sub held_order_by
{
	my ($key, $what, $progress, $progress_what, $filter) = @_;
	$filter //= '';
	$bg->query('SELECT postgres_fdw_disconnect_all()');
	# (every column read: the shards' sorts outgrow their 1MB)
	$bg->query_until(qr/started/, "\\echo started\n$plan_settings SELECT count(t || u || n) FROM (SELECT * FROM sharded ORDER BY $key OFFSET 0) s $filter;\n");
	ok(wait_all_held(@shards), "$what: every shard is held inside its sort at the same moment");
	is($coord->safe_psql('postgres', defined $progress
			? "SELECT string_agg(operator || ' ' || rows_read, ', ' ORDER BY operator) FROM xxl.progress WHERE pid = $pid"
			: "SELECT wait_event FROM pg_stat_activity WHERE pid = $pid"),
		$progress // 'Extension', $progress_what);
	$coord->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$coord->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the coordinator did not end its query';
	like($bg->query('SELECT 1'), qr/^1$/m, 'the coordinator session goes on after the cancel');
	ok(shards_idle($_), 'the cancel ended the query on ' . $_->name) for @shards;
	is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'no spill file on the coordinator or any shard');
}
held_order_by('k, id', 'ORDER BY in a plan', 'XxlShardMerge 0, XxlSort 14999',
	'... and xxl.progress shows the merge waiting for them, the local partition sorted below it');
# and for the ordered Append of ORDER BY the range key
held_order_by('id', 'ORDER BY the range key', 'XxlShardAppend 14999',
	'... while XxlShardAppend has read the local partition, the first in order');
# and while the node spools s1's stream for an initPlan's scan of p1
held_order_by('k, id', 'ORDER BY with an initPlan on s1', undef,
	'... the node waiting to spool s1\'s stream', 'WHERE k > (SELECT min(k) FROM p1)');
$coord->safe_psql('postgres', q{
	SELECT postgres_fdw_disconnect_all();
	ALTER TABLE sharded ATTACH PARTITION p4 FOR VALUES FROM (60000) TO (MAXVALUE)});

# a shard stopped while the others are held: the call ends with its name
$bg->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM xxl.sort('sharded', 'k, id') AS s($cols);\n");
ok(wait_all_held(@shards), 'held on every shard again');
$shards[1]->stop('immediate');
$coord->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the coordinator did not end its call';
$bg->query('SELECT 1');
like($bg->{stderr}, qr/shard "s2" \(partition "p2"\)/, 'a shard stopped during the call: the error names it');
$bg->quit;
ok(shards_idle($_),
	'the other shards\' statements ended too: ' . $_->name) for @shards[0, 2];
$_->safe_psql('postgres', q{ALTER ROLE fdw_user RESET ALL}) for @shards[0, 2];

# a shard down before the call
my ($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 'k') AS s($cols)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  08001: could not connect to server "s2"/, 'a shard down: 08001, naming the server');
$shards[1]->start;
$shards[1]->safe_psql('postgres', q{ALTER ROLE fdw_user RESET ALL});
is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'still no spill file anywhere');

# a shard without pgxxl: its own SQLSTATE, its name, the fix
$shards[2]->safe_psql('postgres', 'DROP EXTENSION pgxxl');
($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 'k') AS s($cols)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  3F000: shard "s3" \(partitions "p3", "p4"\): schema "xxl" does not exist/,
	'a shard without pgxxl: 3F000 from the shard, naming it');
like($err, qr/HINT:  Install pgxxl on server "s3"/, '... with the fix');
is($coord->safe_psql('postgres', qq{$plan_settings
	ALTER TABLE sharded DETACH PARTITION p4;
	EXPLAIN (COSTS OFF) SELECT * FROM sharded ORDER BY k, id;
	SELECT (@{[ digest("SELECT * FROM sharded ORDER BY k, id") ]}) = (@{[ digest("SELECT * FROM flat ORDER BY k, id") ]});
	ALTER TABLE sharded ATTACH PARTITION p4 FOR VALUES FROM (60000) TO (MAXVALUE)}) =~ /XxlShardMerge.*\nt$/s,
	1, '... while ORDER BY through XxlShardMerge needs no pgxxl on the shards');
# a shard whose pgxxl is older (0.8: no packed rows) sends its rows one by
# one, the others packed, and the order is the same
$shards[2]->safe_psql('postgres', q{CREATE EXTENSION pgxxl VERSION '0.8'});
my ($mixed, $mixed_stats) = split /\n/, $coord->safe_psql('postgres', qq{
	@{[ digest("SELECT * FROM xxl.sort('sharded', 't, id') AS s($cols)") ]};
	SELECT string_agg(coalesce(s->>'packed', 'false'), ',') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s});
is($mixed, $coord->safe_psql('postgres', digest('SELECT * FROM flat ORDER BY t, id')),
	'a shard with pgxxl 0.8 beside two at 0.9: the rows of ORDER BY');
is($mixed_stats, 'true,true,false', '... its rows one by one, the others\' packed');
$shards[2]->safe_psql('postgres', 'ALTER EXTENSION pgxxl UPDATE');
# ... and so does a shard whose user may not call xxl.packed_rows
$shards[0]->safe_psql('postgres', q{REVOKE EXECUTE ON FUNCTION xxl.packed_rows(text) FROM PUBLIC});
($mixed, $mixed_stats) = split /\n/, $coord->safe_psql('postgres', qq{
	@{[ digest("SELECT * FROM xxl.sort('sharded', 't, id') AS s($cols)") ]};
	SELECT string_agg(coalesce(s->>'packed', 'false'), ',') FROM xxl.last_stats(), json_array_elements(details::json->'shards') s});
is("$mixed $mixed_stats", $coord->safe_psql('postgres', digest('SELECT * FROM flat ORDER BY t, id')) . ' false,true,true',
	'a shard whose user may not execute xxl.packed_rows sends its rows one by one: the rows of ORDER BY');
$shards[0]->safe_psql('postgres', q{GRANT EXECUTE ON FUNCTION xxl.packed_rows(text) TO PUBLIC});

# collations: one a shard lacks, one it defines otherwise, and a shard
# whose database sorts text otherwise by default
$coord->safe_psql('postgres', q{CREATE COLLATION public.fr (provider = libc, locale = 'C')});
($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 't COLLATE public.fr') AS s($cols)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42P21: shard "s1" \(partition "p1"\) cannot sort in collation "fr" as this server does/,
	'a collation missing on a shard: refused before anything runs');
$_->safe_psql('postgres', q{CREATE COLLATION public.fr (provider = libc, locale = 'en_US.utf8')}) for @shards;
($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 't COLLATE public.fr') AS s($cols)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42P21: .*cannot sort in collation "fr".*\n.*DETAIL:  Here it is c \/ C \/ C \/ , there c \/ en_US.utf8/,
	'a collation defined otherwise on a shard: refused, with both definitions');
$shards[2]->safe_psql('postgres', q{
	CREATE DATABASE other LOCALE 'en_US.utf8' TEMPLATE template0;
});
$shards[2]->safe_psql('other', q{
	CREATE EXTENSION pgxxl;
	CREATE TABLE part (id bigint, t text);
	GRANT SELECT ON part TO fdw_user;
	INSERT INTO part VALUES (1, 'b'), (2, 'B');
});
my ($h3, $p3) = ($shards[2]->host, $shards[2]->port);
$coord->safe_psql('postgres', qq{
	CREATE SERVER other FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$h3', port '$p3', dbname 'other');
	CREATE USER MAPPING FOR CURRENT_USER SERVER other OPTIONS (user 'fdw_user');
	CREATE TABLE mixed (id bigint, t text) PARTITION BY LIST (id);
	CREATE TABLE mixed_local PARTITION OF mixed FOR VALUES IN (3);
	CREATE FOREIGN TABLE mixed_other PARTITION OF mixed FOR VALUES IN (1, 2) SERVER other OPTIONS (table_name 'part');
	INSERT INTO mixed VALUES (3, 'a');
});
($ret, $out, $err) = $coord->psql('postgres', q{SELECT * FROM xxl.sort('mixed', 't') AS s(id bigint, t text)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42P21: shard "other" \(partition "mixed_other"\) cannot sort in collation the database default/,
	'a shard whose database sorts text otherwise: refused for the default collation');
is($coord->safe_psql('postgres', q{SELECT string_agg(t, ' ') FROM xxl.sort('mixed', 't COLLATE "C", id') AS s(id bigint, t text)}),
	'B a b', '... and sorted there in "C"');
($ret, $out, $err) = $coord->psql('postgres', qq{$plan_settings SET enable_sort = off;
	SELECT * FROM mixed ORDER BY t}, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42P21: shard "other" \(partition "mixed_other"\) cannot sort in collation the database default/,
	'ORDER BY in a plan, a shard whose database sorts text otherwise: refused, not merged in two orders');

# ranges of the key in the partitions' order, on servers s1, s2, s1: no
# source is read before the others, so xxl.sort merges, and in plans the
# ordered Append stays (two of its partitions share a connection)
$_->safe_psql('postgres', q{
	CREATE TABLE zig_a (id bigint, v text);
	CREATE TABLE zig_b (LIKE zig_a);
	GRANT SELECT, INSERT ON zig_a, zig_b TO fdw_user}) for @shards[0, 1];
$coord->safe_psql('postgres', q{
	CREATE TABLE zig (id bigint, v text) PARTITION BY RANGE (id);
	CREATE FOREIGN TABLE zig1 PARTITION OF zig FOR VALUES FROM (0) TO (1000) SERVER s1 OPTIONS (table_name 'zig_a');
	CREATE FOREIGN TABLE zig2 PARTITION OF zig FOR VALUES FROM (1000) TO (2000) SERVER s2 OPTIONS (table_name 'zig_a');
	CREATE FOREIGN TABLE zig3 PARTITION OF zig FOR VALUES FROM (2000) TO (3000) SERVER s1 OPTIONS (table_name 'zig_b');
	INSERT INTO zig SELECT g, md5(g::text) FROM generate_series(2999, 0, -1) g;
});
is($coord->safe_psql('postgres', q{
	SELECT string_agg(id::text, ',') = (SELECT string_agg(g::text, ',') FROM generate_series(0, 2999) g)
	FROM xxl.sort('zig', 'id') AS s(id bigint, v text);
	SELECT details::json->>'streams' || ' ' || coalesce(details::json->>'streams_in_order', 'merged') FROM xxl.last_stats()}),
	"t\n2 merged", 'ranges of the key on servers s1, s2, s1: xxl.sort merges the two shards\' sorted rows');
like($coord->safe_psql('postgres', qq{$plan_settings EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM zig ORDER BY id}),
	qr/^Append.*XxlShardAppend not used for an Append: two of its partitions are on server "s1"/s,
	'... and ORDER BY keeps the ordered Append, EXPLAIN VERBOSE saying why');

# a range-partitioned table on text whose foreign partition's database
# sorts text otherwise: the ordered Append's order is the shard's, refused
$coord->safe_psql('postgres', q{
	CREATE TABLE ranged (id bigint, t text) PARTITION BY RANGE (t);
	CREATE TABLE ranged_local PARTITION OF ranged FOR VALUES FROM (MINVALUE) TO ('a');
	CREATE FOREIGN TABLE ranged_other PARTITION OF ranged FOR VALUES FROM ('a') TO (MAXVALUE)
		SERVER other OPTIONS (table_name 'part');
});
($ret, $out, $err) = $coord->psql('postgres', qq{$plan_settings SET enable_sort = off;
	EXPLAIN (COSTS OFF) SELECT * FROM ranged ORDER BY t; SELECT * FROM ranged ORDER BY t},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($out, qr/XxlShardAppend/, 'ORDER BY the text range key: XxlShardAppend');
like($err, qr/42P21: shard "other" \(partition "ranged_other"\) cannot sort in collation the database default/,
	'... refused where the shard\'s database sorts text otherwise, not read in two orders');

# privileges: those of a query of the sharded table through postgres_fdw
($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 'k') AS s($cols)},
	extra_params => [ '-U', 'bob', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: permission denied for table sharded/, 'without SELECT on the sharded table: 42501');
$coord->safe_psql('postgres', 'GRANT SELECT ON sharded TO bob');
($ret, $out, $err) = $coord->psql('postgres', qq{SELECT count(*) FROM xxl.sort('sharded', 'k') AS s($cols)},
	extra_params => [ '-U', 'bob', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42704: user mapping not found for "bob"/, 'without a user mapping: postgres_fdw\'s 42704');
is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'no spill file anywhere after all of it');

$_->stop for $coord, @shards;
done_testing();
