# 012_sort_scan_epq.pl — xxl.sort() in FROM (the custom scan) in UPDATE,
# DELETE and SELECT FOR UPDATE joins whose target row another transaction
# changed meanwhile: PostgreSQL rechecks the join against the row's new
# version (EvalPlanQual), and the scan must then hand back the row it
# contributed.  Each case is compared with the same statement over
# PostgreSQL's own function scan (xxl.sort_scan = off).
# The blocked session is caught deterministically: it waits on a lock,
# which pg_stat_activity shows, before the blocker commits.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('epq');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION pgxxl');

my $sorted = q{xxl.sort('SELECT g AS id FROM generate_series(1, 10) g', 'id') AS s(id int)};

# Run $stmt in a session that has to wait for another one updating rows
# 1..5; return what the table holds afterwards and what $stmt printed.
sub race
{
	my ($scan, $stmt) = @_;
	$node->safe_psql('postgres', q{
		DROP TABLE IF EXISTS epq;
		CREATE TABLE epq (id int PRIMARY KEY, v int);
		INSERT INTO epq SELECT g, 0 FROM generate_series(1, 10) g;
	});
	my $a = $node->background_psql('postgres');
	$a->query_safe('BEGIN');
	$a->query_safe('UPDATE epq SET v = v + 1 WHERE id <= 5');

	my $b = $node->background_psql('postgres');
	my $pid = $b->query_safe('SELECT pg_backend_pid()');
	$b->query_safe("SET xxl.sort_scan = $scan");
	$b->query_until(qr/started/, "\\echo started\n$stmt;\n\\echo finished\n");
	$node->poll_query_until('postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid")
	  or die 'the second session never waited for the first';
	$a->query_safe('COMMIT');
	$a->quit;
	my $out = $b->query_until(qr/finished\r?\n/, '');
	$out =~ s/\r?\n?finished\r?\n$//;
	$b->quit;
	my $rows = $node->safe_psql('postgres', q{SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM epq});
	return ($rows, $out);
}

# each statement prints the rows it touched, in one line
my %cases = (
	'UPDATE ... FROM' => "WITH u AS (UPDATE epq t SET v = v + 100 FROM $sorted WHERE t.id = s.id "
	  . "RETURNING t.id, t.v) SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM u",
	'DELETE ... USING' => "WITH d AS (DELETE FROM epq t USING $sorted WHERE t.id = s.id AND t.v >= 0 "
	  . "RETURNING t.id, t.v) SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM d",
	'SELECT ... FOR UPDATE' => "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM "
	  . "(SELECT t.id, t.v FROM epq t JOIN $sorted ON t.id = s.id FOR UPDATE OF t) x",
	'UPDATE ... FROM with the whole row' => "WITH u AS (UPDATE epq t SET v = v + length(s::text) + 1000 "
	  . "FROM $sorted WHERE t.id = s.id RETURNING t.id, t.v) "
	  . "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM u",
);
for my $name (sort keys %cases)
{
	my ($want_rows, $want_out) = race('off', $cases{$name});
	my ($got_rows, $got_out) = race('on', $cases{$name});
	is($got_rows, $want_rows, "$name: the table ends as with PostgreSQL's function scan");
	is($got_out, $want_out, "$name: the statement reports what PostgreSQL's function scan reports");
}

# the rechecked rows really were rechecked, not dropped
my ($rows) = race('on', $cases{'UPDATE ... FROM'});
is($rows, join(',', (map { "$_:101" } 1 .. 5), (map { "$_:100" } 6 .. 10)),
	'UPDATE ... FROM: the rows updated meanwhile get both increments');

$node->stop;
done_testing();
