# 001_basic.pl — the extension loads in a freshly initialised server started by
# PostgreSQL::Test::Cluster, xxl.version() answers, and DROP EXTENSION
# removes the schema.  Run by `make test` (scripts/test.sh) as the postgres user.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

my ($rc, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION pgxxl');
is($rc, 0, 'CREATE EXTENSION pgxxl') or diag($err);

my $version = $node->safe_psql('postgres', 'SELECT xxl.version()');
like($version, qr/^pgxxl /, 'xxl.version() names the extension');
note("version: $version");

$node->safe_psql('postgres', 'DROP EXTENSION pgxxl');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_namespace WHERE nspname = 'xxl'"),
	'0', 'DROP EXTENSION removes schema xxl');

$node->stop;
done_testing();
