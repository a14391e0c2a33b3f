# 071_sort_in_plans_pg.pl — PostgreSQL's own regression tests that exercise
# sorting (window functions, set operations, joins, aggregates, DISTINCT,
# grouping sets, LIMIT, subqueries, tuplesort's and incremental sort's own
# tests, cursors, partitionwise joins and aggregates) run twice on the same
# server with pg_regress: with xxl.sort_in_plans on (every Sort it can take,
# at a 1MB budget) and off.  The two outputs must agree, EXPLAIN output aside:
#   - every statement's messages (errors, notices) and every result's
#     header and row count are identical;
#   - every result has the same rows; they may come in another order only
#     where rows tie under the sort (neither sort orders ties), and values
#     may differ only in the results listed in %tie_dependent: window
#     functions whose value depends on the order of peers (first_value,
#     last_value, nth_value, lead, lag, row_number over ties, ROWS frames
#     over non-unique keys), which the SQL standard leaves open.
# The sources come from Debian's postgresql-15 source package
# (scripts/pg-regress-src.sh, run by scripts/test.sh: PGXXL_PG_REGRESS_SRC).
use strict;
use warnings;

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{PGXXL_PG_REGRESS_SRC} // '';
BAIL_OUT('PGXXL_PG_REGRESS_SRC names no PostgreSQL regression sources (scripts/pg-regress-src.sh)')
  unless -f "$src/sql/window.sql";
my $pg_regress = $ENV{PG_REGRESS} or BAIL_OUT('PG_REGRESS is not set');

my @tests = qw(test_setup create_index window union aggregates join select select_distinct
  select_distinct_on select_having select_implicit groupingsets limit subselect tuplesort
  incremental_sort portals partition_join partition_aggregate);

# Results whose values depend on the order of peers (see above), by file and
# a piece of the statement that produced them.
my %tie_dependent = (
	window => [
		'SELECT last_value(four) OVER (ORDER BY ten), ten, four FROM tenk1',
		'first_value(unique1) over (ORDER BY four rows between current row and 2 following exclude current row)',
		'first_value(unique1) over (ORDER BY four rows between current row and 2 following exclude group)',
		'last_value(unique1) over (ORDER BY four rows between current row and 2 following exclude current row)',
		'last_value(unique1) over (ORDER BY four rows between current row and 2 following exclude group)',
		'last_value(unique1) over (ORDER BY four rows between current row and 2 following exclude ties)',
		'WINDOW w AS (order by four range between current row and unbounded following)',
		"following \texclude ties), \tlast_value(salary) over(order by enroll_date range between unbounded preceding and '1 year'::interval following),",
		"last_value(salary) over(order by enroll_date range between unbounded preceding and '1 year'::interval following \texclude ties)",
		"last_value(salary) over(order by enroll_date range between unbounded preceding and '1 year'::interval following \texclude group)",
		"last_value(salary) over(order by enroll_date range between unbounded preceding and '1 year'::interval following \texclude current row)",
		'(order by x desc nulls first range between 2 preceding and 2 following)',
		"window w as (order by f_time desc range between",
		"window w as (order by f_timestamptz desc range between",
		"window w as (order by f_timestamp desc range between",
		'nth_value(salary, 1) over(order by enroll_date groups between 1 preceding and 1 following)',
		'lag(salary) over(order by enroll_date groups between 1 preceding and 1 following)',
		'nth_value(salary, 1) over(order by enroll_date groups between 1 following and 3 following',
		'lag(salary) over(order by enroll_date groups between 1 following and 3 following exclude group)',
		'row_number() OVER (PARTITION BY depname) rn',
	],
);

my $node = PostgreSQL::Test::Cluster->new('pgsorts');
$node->init;
$node->start;

my %out;
for my $mode (qw(on off))
{
	my $dir = $node->basedir . "/regress_$mode";
	make_path($dir);
	local $ENV{PGOPTIONS} = join ' ', '-c session_preload_libraries=pgxxl',
	  "-c xxl.sort_in_plans=$mode", '-c xxl.sort_in_plans_threshold=0',
	  '-c xxl.memory=1MB', '-c xxl.block_size=64kB';
	# pg_regress's verdict against PostgreSQL's expected files is not ours:
	# test_setup needs the regress library no package ships, and EXPLAIN
	# shows XxlSort where they show Sort
	system($pg_regress, "--inputdir=$src", "--outputdir=$dir", '--host=' . $node->host,
		'--port=' . $node->port, "--dbname=regress_$mode", @tests);
	$out{$mode} = "$dir/results";
}

# EXPLAIN output goes: its result table and the row count after it (a
# result is a plan if its column is QUERY PLAN or a test's explain function)
sub mask_plans
{
	my @lines = @_;
	my @kept;
	my $in_plan = 0;
	for my $l (@lines)
	{
		if ($l =~ /^\s*(QUERY PLAN|\w*explain\w*)\s*$/i) { $in_plan = 1; push @kept, '<plan>'; next; }
		if ($in_plan)
		{
			$in_plan = 0 if $l =~ /^\(\d+ rows?\)$/;
			next;
		}
		push @kept, $l;
	}
	return @kept;
}

# The output as items: ['text', line] for everything but result rows, and
# ['rows', statement, [rows]] for the rows of one result.
sub items
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "$file: $!";
	chomp(my @lines = <$fh>);
	close($fh);
	@lines = mask_plans(@lines);
	my (@items, @stmt);
	for (my $i = 0; $i < @lines; $i++)
	{
		if ($i + 1 < @lines && $lines[$i] =~ /\S/ && $lines[$i + 1] =~ /^-+(\+-+)*$/)
		{
			my $j = $i + 2;
			my @rows;
			push @rows, $lines[$j++] while $j < @lines && $lines[$j] !~ /^\(\d+ rows?\)$/;
			push @items, [ 'text', $lines[$i] ], [ 'rows', join(' ', @stmt), \@rows ],
			  [ 'text', $lines[$j] // '' ];
			@stmt = ();
			$i = $j;
			next;
		}
		push @items, [ 'text', $lines[$i] ];
		push @stmt, $lines[$i];
	}
	return @items;
}

my ($results, $exact, $reordered, $tie_values) = (0, 0, 0, 0);
my ($xxl_nodes, $window_nodes, $agg_nodes) = (0, 0, 0);
for my $t (@tests)
{
	my $on_file = "$out{on}/$t.out";
	my $off_file = "$out{off}/$t.out";
	ok(-s $on_file && -s $off_file, "$t: ran with the setting on and off") or next;
	open(my $fh, '<', $on_file) or die;
	my $text = do { local $/; <$fh> };
	$xxl_nodes += () = $text =~ /XxlSort/g;
	$window_nodes += () = $text =~ /XxlWindow/g;
	$agg_nodes += () = $text =~ /XxlAgg/g;
	close($fh);

	my @on = items($on_file);
	my @off = items($off_file);
	my @problems;
	push @problems, 'the outputs have different shapes (' . scalar(@on) . ' vs ' . scalar(@off) . ' items)'
	  if @on != @off;
	for (my $k = 0; $k < @on && $k < @off && @problems < 5; $k++)
	{
		my ($a, $b) = ($on[$k], $off[$k]);
		if ($a->[0] ne $b->[0])
		{
			push @problems, "item $k: a result on one side, text on the other";
			last;
		}
		if ($a->[0] eq 'text')
		{
			push @problems, "text differs: '$a->[1]' vs '$b->[1]'" if $a->[1] ne $b->[1];
			next;
		}
		$results++;
		my @ra = @{ $a->[2] };
		my @rb = @{ $b->[2] };
		if (join("\n", @ra) eq join("\n", @rb)) { $exact++; next; }
		if (join("\n", sort @ra) eq join("\n", sort @rb)) { $reordered++; next; }
		my $stmt = $b->[1];
		if (grep { index($stmt, $_) >= 0 } @{ $tie_dependent{$t} // [] }) { $tie_values++; next; }
		push @problems, 'rows differ after: ' . substr($stmt, -300);
	}
	is(join("\n", @problems), '', "$t: the same output with xxl.sort_in_plans on and off");
}

cmp_ok($xxl_nodes, '>', 100, "XxlSort replaced Sort $xxl_nodes times in the plans EXPLAIN showed");
cmp_ok($window_nodes, '>', 0, "XxlWindow replaced WindowAgg $window_nodes times in the plans EXPLAIN showed");
cmp_ok($agg_nodes, '>', 0, "XxlAgg replaced GroupAggregate $agg_nodes times in the plans EXPLAIN showed");
cmp_ok($exact, '>', 0.9 * $results,
	"$results results compared: $exact identical, $reordered in another order of ties, "
	  . "$tie_values with tie-dependent window values");

$node->stop;
done_testing();
