# 091_shard_forests.pl — components and spanning forests of an edge table
# sharded with postgres_fdw: a coordinator and three shard servers, a
# range-partitioned edge table with a local partition and three foreign
# ones (the last empty, one with its columns named otherwise there), a
# random graph whose components span the shards, with self loops,
# self-loop-only nodes, parallel and reversed edges and tied costs.
# connected_components, spanning_forest and minimum_spanning_forest (and
# their _into forms) of the sharded table give the single-server call's
# answer over the same rows in one local table, as an ordinary role, at a
# 1MB budget, on both engine paths, the shards' rows packed (and one by one
# from a shard whose pgxxl is older); every shard is held inside its
# reduction at the same moment and a cancel ends all of them with no spill
# file anywhere; a NULL on a shard, a shard without pgxxl, a user without a
# user mapping or without SELECT end the call with a clear error.  Run by
# `make test` (scripts/test.sh).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use XxlShards;

my ($coord, @shards) = start_shards('alice', 'bob');

$_->safe_psql('postgres', q{
	CREATE TABLE e (id bigint, source int, target bigint, cost numeric);
	CREATE TABLE e_empty (LIKE e);
	GRANT SELECT, INSERT ON e, e_empty TO fdw_user;
}) for @shards;
# the first shard names its columns otherwise
$shards[0]->safe_psql('postgres', q{
	CREATE TABLE renamed (eid bigint, a int, b bigint, w numeric);
	GRANT SELECT, INSERT ON renamed TO fdw_user;
});

# ~12000 nodes, 20000 edges: a shard's quarter of them leaves its nodes in
# small pieces that only the other shards' edges join
$coord->safe_psql('postgres', q{
	CREATE TABLE edges (id bigint, gone int, source int, target bigint, cost numeric)
		PARTITION BY RANGE (id);
	ALTER TABLE edges DROP COLUMN gone;
	CREATE TABLE p0 PARTITION OF edges FOR VALUES FROM (MINVALUE) TO (5000);
	CREATE FOREIGN TABLE p1 PARTITION OF edges FOR VALUES FROM (5000) TO (10000)
		SERVER s1 OPTIONS (table_name 'renamed');
	ALTER FOREIGN TABLE p1 ALTER COLUMN id OPTIONS (column_name 'eid'),
		ALTER COLUMN source OPTIONS (column_name 'a'), ALTER COLUMN target OPTIONS (column_name 'b'),
		ALTER COLUMN cost OPTIONS (column_name 'w');
	CREATE FOREIGN TABLE p2 PARTITION OF edges FOR VALUES FROM (10000) TO (15000)
		SERVER s2 OPTIONS (table_name 'e');
	CREATE FOREIGN TABLE p3 PARTITION OF edges FOR VALUES FROM (15000) TO (20000)
		SERVER s3 OPTIONS (table_name 'e');
	CREATE FOREIGN TABLE p4 PARTITION OF edges FOR VALUES FROM (20000) TO (MAXVALUE)
		SERVER s3 OPTIONS (table_name 'e_empty');
	SELECT setseed(0.25);
	CREATE TEMP TABLE base AS
	SELECT g,
		   CASE WHEN g % 97 = 0 THEN 30000 + g ELSE 1 + (random() * 12000)::int END AS s,
		   CASE WHEN g % 97 = 0 THEN 30000 + g ELSE 1 + (random() * 12000)::int END AS t,
		   (random() * 9)::int::numeric AS c			-- ties everywhere
	FROM generate_series(1, 19999) g;
	-- g % 97: a node whose only edge is a self loop; g % 89: a self loop of
	-- a connected node; g % 41: edge g - 5000 reversed, in another partition
	CREATE TABLE flat AS
	SELECT b.g AS id,
		   CASE WHEN b.g % 41 = 0 AND b.g > 5000 THEN o.t::int ELSE b.s END AS source,
		   CASE WHEN b.g % 41 = 0 AND b.g > 5000 THEN o.s WHEN b.g % 89 = 0 THEN b.s ELSE b.t END::bigint AS target,
		   b.c AS cost
	FROM base b LEFT JOIN base o ON o.g = b.g - 5000;
	INSERT INTO edges SELECT * FROM flat;
	GRANT SELECT ON edges, flat TO alice;
	GRANT CREATE ON SCHEMA public TO alice;
	CREATE ROLE carol LOGIN;
});
is($coord->safe_psql('postgres', q{
	SELECT string_agg(p || ' ' || n, ' ' ORDER BY p)
	FROM (SELECT tableoid::regclass::text p, count(*) n FROM edges GROUP BY 1) c}),
	'p0 4999 p1 5000 p2 5000 p3 5000',
	'the edges are spread over the local partition and three shards; the third shard\'s second partition is empty');

$_->safe_psql('postgres', q{ALTER ROLE fdw_user SET xxl.memory = '1MB'}) for @shards;

sub rows_digest
{
	my ($query) = @_;
	return "SELECT count(*) || ' ' || md5(coalesce(string_agg(r::text, ',' ORDER BY r::text), '')) FROM ($query) r";
}
# what a call told xxl.last_stats(): shards, the edges each sent, the local ones
my $shard_stats = q{
	SELECT json_array_length(details::json->'shards') || ' '
		|| (SELECT string_agg(s->>'shard', ',') FROM json_array_elements(details::json->'shards') s) || ' '
		|| (rows = (SELECT sum((s->>'rows')::bigint) FROM json_array_elements(details::json->'shards') s) + 4999)::text
		|| ' ' || (SELECT string_agg(coalesce(s->>'packed', 'false'), ',') FROM json_array_elements(details::json->'shards') s)
	FROM xxl.last_stats()};

for my $path ('in-memory', 'external')
{
	my $setup = "SET xxl.memory = '1MB';";
	if ($path eq 'external')
	{
		# (a superuser's session: the setting is for tests only)
		$_->safe_psql('postgres', q{ALTER ROLE fdw_user SET xxl.graph_max_semi_nodes = 1}) for @shards;
		$setup .= ' SET xxl.graph_max_semi_nodes = 1;';
		is($shards[0]->safe_psql('postgres', 'SHOW xxl.graph_max_semi_nodes', extra_params => [ '-U', 'fdw_user' ]),
			'1', 'the shards\' sessions take the external path too');
	}
	my @as = $path eq 'external' ? () : (extra_params => [ '-U', 'alice' ]);

	my ($cc, $stats, $oracle, $how) = split /\n/, $coord->safe_psql('postgres', qq{
		$setup
		@{[ rows_digest("SELECT * FROM xxl.connected_components('edges')") ]};
		$shard_stats;
		@{[ rows_digest("SELECT * FROM xxl.connected_components('flat')") ]};
		SELECT details::json->>'path' FROM xxl.last_stats();
	}, @as);
	is($cc, $oracle, "$path: connected_components of the sharded edges: the single-server answer");
	is($stats, '3 s1,s2,s3 true true,true,true',
		"... every shard sent its components packed, counted with the local edges");
	is($how, $path, "... on the $path path");

	my ($msf, $weight, $oracle_msf) = split /\n/, $coord->safe_psql('postgres', qq{
		$setup
		@{[ rows_digest("SELECT * FROM xxl.minimum_spanning_forest('edges')") ]};
		SELECT sum(cost) FROM xxl.minimum_spanning_forest('edges');
		@{[ rows_digest("SELECT * FROM xxl.minimum_spanning_forest('flat')") ]};
	}, @as);
	is($msf, $oracle_msf, "$path: minimum_spanning_forest: the single-server rows (ids are distinct)");

	# a spanning forest is not unique: it must be one of the input's edges,
	# acyclic and spanning (nodes - components edges joining exactly the components)
	my ($sf_n, $foreign_edges, $sf_cc, $nodes_minus_components, $cc_oracle) = split /\n/,
	  $coord->safe_psql('postgres', qq{
		$setup
		DROP TABLE IF EXISTS sf;
		SELECT xxl.spanning_forest_into('edges', 'sf');
		SELECT count(*) FROM (SELECT source, target FROM sf EXCEPT SELECT source, target FROM flat) x;
		@{[ rows_digest("SELECT * FROM xxl.connected_components('SELECT source, target FROM sf UNION ALL SELECT n, n FROM (SELECT source FROM flat UNION SELECT target FROM flat) v(n)')") ]};
		SELECT count(*) - count(DISTINCT component) FROM xxl.connected_components('flat');
		@{[ rows_digest("SELECT * FROM xxl.connected_components('flat')") ]};
	}, @as);
	is($sf_n, $nodes_minus_components, "$path: spanning_forest_into: nodes - components edges");
	is($foreign_edges, 0, '... each an input edge as given');
	is($sf_cc, $cc_oracle, '... joining exactly the components');

	my ($cc_n, $msf_n, $same) = split /\n/, $coord->safe_psql('postgres', qq{
		$setup
		DROP TABLE IF EXISTS cc_into, msf_into;
		SELECT xxl.connected_components_into('edges', 'cc_into');
		SELECT xxl.minimum_spanning_forest_into('edges', 'msf_into');
		SELECT (@{[ rows_digest('TABLE cc_into') ]}) = '$oracle' AND (@{[ rows_digest('TABLE msf_into') ]}) = '$oracle_msf';
	}, @as);
	is("$cc_n $msf_n $same", (split / /, $oracle)[0] . ' ' . (split / /, $oracle_msf)[0] . ' t',
		"$path: the _into forms write the same rows and return their count");
	$_->safe_psql('postgres', q{ALTER ROLE fdw_user RESET xxl.graph_max_semi_nodes}) for @shards;
}

# a shard whose pgxxl is older (0.8: no packed reduction) sends its rows
# one by one, the others packed, and the answer is the same
$shards[1]->safe_psql('postgres', q{DROP EXTENSION pgxxl; CREATE EXTENSION pgxxl VERSION '0.8'});
my ($cc_mixed, $stats_mixed, $cc_flat, $msf_mixed, $msf_flat) = split /\n/, $coord->safe_psql('postgres', qq{
	@{[ rows_digest("SELECT * FROM xxl.connected_components('edges')") ]};
	$shard_stats;
	@{[ rows_digest("SELECT * FROM xxl.connected_components('flat')") ]};
	@{[ rows_digest("SELECT * FROM xxl.minimum_spanning_forest('edges')") ]};
	@{[ rows_digest("SELECT * FROM xxl.minimum_spanning_forest('flat')") ]}});
is($stats_mixed, '3 s1,s2,s3 true true,false,true', 'a shard with pgxxl 0.8 sends its rows one by one, the others packed');
is("$cc_mixed $msf_mixed", "$cc_flat $msf_flat", '... and the components and minimum forest are the single-server ones');
$shards[1]->safe_psql('postgres', q{ALTER EXTENSION pgxxl UPDATE});
# ... and so does a shard whose user may not call the packed reduction
$shards[2]->safe_psql('postgres', q{REVOKE EXECUTE ON FUNCTION xxl.shard_reduce_edges(text, text) FROM PUBLIC});
($cc_mixed, $stats_mixed) = split /\n/, $coord->safe_psql('postgres', qq{
	@{[ rows_digest("SELECT * FROM xxl.connected_components('edges')") ]};
	$shard_stats});
is("$cc_mixed $stats_mixed", "$cc_flat 3 s1,s2,s3 true true,true,false",
	'a shard whose user may not execute xxl.shard_reduce_edges sends its rows one by one: the same components');
$shards[2]->safe_psql('postgres', q{GRANT EXECUTE ON FUNCTION xxl.shard_reduce_edges(text, text) TO PUBLIC});

is($coord->safe_psql('postgres', qq{
	SET xxl.on_shards = off;
	SELECT (@{[ rows_digest("SELECT * FROM xxl.connected_components('edges')") ]})
		 = (@{[ rows_digest("SELECT * FROM xxl.connected_components('flat')") ]});
	SELECT details::json->'shards' IS NULL FROM xxl.last_stats()}),
	"t\nt", 'xxl.on_shards = off reads the edges through postgres_fdw and works here');
is($coord->safe_psql('postgres', q{
	CREATE TABLE none (source bigint, target bigint) PARTITION BY RANGE (source);
	CREATE FOREIGN TABLE none_1 PARTITION OF none FOR VALUES FROM (MINVALUE) TO (MAXVALUE)
		SERVER s3 OPTIONS (table_name 'e_empty');
	SELECT count(*) FROM xxl.connected_components('none');
	SELECT xxl.spanning_forest_into('none', 'none_sf')}),
	"0\n0", 'an edge table whose only partition is an empty shard: no rows, an empty table');

# every shard held inside its reduction at once (once its edges are read:
# the external path polls there, whatever the edges' number); a cancel on
# the coordinator ends them all, and no server keeps a spill file
$_->safe_psql('postgres', q{
	ALTER ROLE fdw_user SET xxl.test_hold = 'merge';
	ALTER ROLE fdw_user SET xxl.graph_max_semi_nodes = 1}) for @shards;
$coord->safe_psql('postgres', 'SELECT postgres_fdw_disconnect_all()');
my $bg = $coord->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM xxl.minimum_spanning_forest('edges');\n");
ok(wait_all_held(@shards), 'every shard is held inside its minimum spanning forest at the same moment');
$coord->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$coord->poll_query_until('postgres', "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
  or die 'the coordinator did not end its call';
like($bg->query('SELECT 1'), qr/^1$/m, 'the coordinator session goes on after the cancel');
like($bg->{stderr}, qr/canceling statement due to user request/, '... which reported the cancel');
ok(shards_idle($_), 'the cancel ended the statement on ' . $_->name) for @shards;
is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'no spill file on the coordinator or any shard');
$bg->quit;
$_->safe_psql('postgres', q{ALTER ROLE fdw_user RESET xxl.test_hold; ALTER ROLE fdw_user RESET xxl.graph_max_semi_nodes})
  for @shards;

# errors on a shard: its SQLSTATE, its name, nothing left behind
$shards[1]->safe_psql('postgres', 'INSERT INTO e VALUES (12345, NULL, 7, 1)');
my ($ret, $out, $err) = $coord->psql('postgres', q{SELECT count(*) FROM xxl.connected_components('edges')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  22004: shard "s2" \(partition "p2"\): xxl.connected_components: column "source" of the edges is null/,
	'a NULL source on a shard: 22004 from the shard, naming it');
$shards[1]->safe_psql('postgres', 'DELETE FROM e WHERE source IS NULL');
$shards[2]->safe_psql('postgres', 'DROP EXTENSION pgxxl');
($ret, $out, $err) = $coord->psql('postgres', q{SELECT xxl.spanning_forest_into('edges', 'never')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  3F000: shard "s3" \(partitions "p3", "p4"\): schema "xxl" does not exist/,
	'a shard without pgxxl: 3F000 from the shard, naming it');
is($coord->safe_psql('postgres', q{SELECT to_regclass('never') IS NULL}), 't', '... and no target table');
$shards[2]->safe_psql('postgres', 'CREATE EXTENSION pgxxl');
$shards[0]->stop;
($ret, $out, $err) = $coord->psql('postgres', q{SELECT count(*) FROM xxl.connected_components('edges')},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  08001: could not connect to server "s1"/, 'a shard down: 08001, naming the server');
$shards[0]->start;

# privileges: those of a query of the edge table through postgres_fdw
($ret, $out, $err) = $coord->psql('postgres', q{SELECT count(*) FROM xxl.connected_components('edges')},
	extra_params => [ '-U', 'bob', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42501: permission denied for table edges/, 'without SELECT on the edge table: 42501');
$coord->safe_psql('postgres', 'GRANT SELECT ON edges TO carol');
($ret, $out, $err) = $coord->psql('postgres', q{SELECT count(*) FROM xxl.connected_components('edges')},
	extra_params => [ '-U', 'carol', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ERROR:  42704: user mapping not found for "carol"/, 'without a user mapping: postgres_fdw\'s 42704');
is(spill_files_anywhere($coord, @shards), '0 0 0 0', 'no spill file anywhere after all of it');

$_->stop for $coord, @shards;
done_testing();
