# XxlShards.pm — a sharded cluster for the TAP tests of operators over
# tables sharded with postgres_fdw: a coordinator and three shard servers
# (PostgreSQL::Test::Cluster), pgxxl on all of them, postgres_fdw on the
# coordinator with servers s1..s3 and user mappings for the test's roles,
# and the checks the tests share: every shard held inside its operator at
# once (xxl.test_hold set on the role the user mappings use), no spill
# file on any server.
package XxlShards;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use Exporter 'import';
our @EXPORT = qw(start_shards wait_all_held held_on_shards spill_files_anywhere shards_idle);

# start_shards(@roles): ($coord, @shards), every server started, with
# pgxxl (preloaded on the coordinator, where ORDER BY plans use it); on each shard the role fdw_user, which the user mappings of the
# coordinator's superuser and of each of @roles (created here, LOGIN) use.
sub start_shards
{
	my (@roles) = @_;
	my $coord = PostgreSQL::Test::Cluster->new('coordinator');
	$coord->init;
	$coord->append_conf('postgresql.conf', "shared_preload_libraries = 'pgxxl'");
	$coord->start;
	my @shards = map { PostgreSQL::Test::Cluster->new("shard$_") } 1 .. 3;
	for my $s (@shards)
	{
		$s->init;
		$s->start;
		$s->safe_psql('postgres', q{
			CREATE EXTENSION pgxxl;
			CREATE ROLE fdw_user LOGIN;
		});
	}
	my $servers = join "\n", map {
		my $i = $_;
		my $s = $shards[$i - 1];
		my ($h, $p) = ($s->host, $s->port);
		qq{CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$h', port '$p', dbname 'postgres');
		   CREATE USER MAPPING FOR CURRENT_USER SERVER s$i OPTIONS (user 'fdw_user');}
		  . join('', map { qq{CREATE USER MAPPING FOR $_ SERVER s$i OPTIONS (user 'fdw_user', password_required 'false');} } @roles)
	} 1 .. 3;
	$coord->safe_psql('postgres', join("\n",
		'CREATE EXTENSION pgxxl;', 'CREATE EXTENSION postgres_fdw;',
		(map { "CREATE ROLE $_ LOGIN;" } @roles), $servers));
	return ($coord, @shards);
}

# The number of fdw_user statements held (wait event "Extension") on each shard.
sub held_on_shards
{
	my (@shards) = @_;
	return join ' ', map {
		$_->safe_psql('postgres', q{
			SELECT count(*) FROM pg_stat_activity WHERE usename = 'fdw_user' AND wait_event = 'Extension'})
	} @shards;
}

# Each shard polled until its statement is held; a held statement stays
# held until a cancel, so once every poll has succeeded all of them are
# held together.
sub wait_all_held
{
	my (@shards) = @_;
	$_->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity WHERE usename = 'fdw_user' AND wait_event = 'Extension'})
	  or return 0 for @shards;
	return held_on_shards(@shards) eq join(' ', ('1') x @shards);
}

# Whether every fdw_user statement on the shard has ended (polled).
sub shards_idle
{
	my ($shard) = @_;
	return $shard->poll_query_until('postgres', q{
		SELECT count(*) = 0 FROM pg_stat_activity WHERE usename = 'fdw_user' AND state <> 'idle'});
}

# The number of temporary files on each server, as one string.
sub spill_files_anywhere
{
	my (@nodes) = @_;
	return join ' ', map {
		$_->safe_psql('postgres', q{SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp%'})
	} @nodes;
}

1;
