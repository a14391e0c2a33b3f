# XxlHold.pm — reaching an operator's phase in a TAP test without timing:
# the superuser-only setting xxl.test_hold makes the engine wait, at its
# first cancel poll in the named phase, until a cancel or termination
# arrives (wait event "Extension").  A test starts the statement in a
# background session, waits until pg_stat_activity shows it held there,
# and then cancels, terminates or kills it: the operator is in that phase
# however fast or busy the machine is.
package XxlHold;

use strict;
use warnings;

use Exporter 'import';
our @EXPORT = qw(start_held spill_files cancel_held);

# start_held($node, $phase, \@setup_statements, $statement[, user => $role]):
# returns the background session and its backend pid once the backend is
# held.  With a user, the session is that role's: xxl.test_hold, which only
# a superuser may set, comes from the role's settings (ALTER ROLE ... SET),
# made for this session and reset once it started.
sub start_held
{
	my ($node, $phase, $setup, $statement, %opt) = @_;
	my $user = $opt{user};
	$node->safe_psql('postgres', qq{ALTER ROLE "$user" SET xxl.test_hold = '$phase'}) if $user;
	my $bg = $node->background_psql('postgres', on_error_stop => 0,
		$user ? (extra_params => [ '-U', $user ]) : ());
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	$node->safe_psql('postgres', qq{ALTER ROLE "$user" RESET xxl.test_hold}) if $user;
	$bg->query_safe($_) for @$setup;
	$bg->query_safe("SET xxl.test_hold = '$phase'") unless $user;
	$bg->query_until(qr/started/, "\\echo started\n$statement;\n");
	# held, or idle after this statement: psql echoes "started" before it
	# sends the statement, so an idle backend may not have received it yet
	$node->poll_query_until('postgres', qq{
		SELECT wait_event IS NOT DISTINCT FROM 'Extension'
			OR (state = 'idle' AND position(\$xxl_hold\$$statement\$xxl_hold\$ IN query) > 0)
		FROM pg_stat_activity WHERE pid = $pid})
	  or die "the statement neither ended nor reached the $phase hold: $statement";
	my $held = $node->safe_psql('postgres',
		"SELECT wait_event IS NOT DISTINCT FROM 'Extension' FROM pg_stat_activity WHERE pid = $pid");
	die "the statement ended before its $phase phase: $statement\n$bg->{stderr}" unless $held eq 't';
	return ($bg, $pid);
}

# spill_files($node, $pid): how many of the engine's spill files backend
# $pid has in the temporary directory (pgsql_tmp<pid>.xxl*).
sub spill_files
{
	my ($node, $pid) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_tmpdir() WHERE name LIKE 'pgsql_tmp${pid}.xxl%'");
}

# cancel_held($node, $pid): cancel backend $pid's statement and return once
# the backend is idle again.
sub cancel_held
{
	my ($node, $pid) = @_;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	$node->poll_query_until('postgres',
		"SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $pid")
	  or die "the canceled statement of backend $pid did not end";
}

1;
