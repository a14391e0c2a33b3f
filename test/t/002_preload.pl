# 002_preload.pl — the set-up the README gives for a user's own server:
# pgxxl in shared_preload_libraries.  The postmaster says once, in its log,
# when its environment would let OpenMP's idle threads spin (no
# OMP_WAIT_POLICY=passive), with the fix; with the policy set it says
# nothing.  A preloaded library puts XxlSort into every session's plans.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('preload');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'pgxxl'");

my $hint = qr/does not set OMP_WAIT_POLICY=passive.*\n.*DETAIL:.*spin.*\n.*HINT:.*OMP_WAIT_POLICY=passive.*environment/;

{
	local $ENV{OMP_WAIT_POLICY};
	delete $ENV{OMP_WAIT_POLICY};
	$node->start;
}
my $log = slurp_file($node->logfile);
like($log, $hint, 'without OMP_WAIT_POLICY the postmaster logs the hint with its fix');
my $times = () = $log =~ /does not set OMP_WAIT_POLICY/g;
$node->safe_psql('postgres', 'CREATE EXTENSION pgxxl');
$node->safe_psql('postgres', 'SELECT xxl.version()') for 1 .. 3;
$log = slurp_file($node->logfile);
my $after = () = $log =~ /does not set OMP_WAIT_POLICY/g;
is($times, 1, 'said once at start');
is($after, 1, 'and not again by the backends that use the library');

# preloaded: every session's sorts that spill are XxlSort, without LOAD
like($node->safe_psql('postgres',
		"SET work_mem = '64kB'; EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 100000) g ORDER BY g DESC"),
	qr/XxlSort/, 'a new session plans XxlSort with the library preloaded');
$node->stop;

my $offset = -s $node->logfile;
{
	local $ENV{OMP_WAIT_POLICY} = 'PASSIVE';
	$node->start;
}
$node->safe_psql('postgres', 'SELECT xxl.version()');
$log = slurp_file($node->logfile, $offset);
unlike($log, qr/OMP_WAIT_POLICY/, 'with a passive policy (any case) it says nothing');
$node->stop;
done_testing();
