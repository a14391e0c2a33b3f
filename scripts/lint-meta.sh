#!/usr/bin/env bash
# lint-meta.sh — META.json, the PGXN distribution metadata, checked against
# PGXN's meta spec 1.0.0 (https://pgxn.org/meta/spec.txt): the required
# keys with their types (name, abstract, maintainer, license, provides with
# a file and version per extension, meta-spec 1.0.0, version), semantic
# versions, a license the spec knows, prereqs' phases and relations, and
# the version equal to pgxxl.control's default_version (as x.y.0), whose
# install script is the file pgxxl provides.  One
# check per rule; prints one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
control=$(sed -n "s/^default_version = '\(.*\)'/\1/p" pgxxl.control)
perl -MJSON::PP -e '
	my ($control) = @ARGV;
	my ($passed, $failed) = (0, 0);
	sub check { my ($ok, $what) = @_; if ($ok) { $passed++ } else { $failed++; print "META.json: $what\n" } }
	my $semver = qr/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z]+)?$/;
	my %licenses = map { $_ => 1 } qw(agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd gfdl_1_2
		gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1 openssl perl_5
		postgresql qpl_1_0 ssleay sun unrestricted open_source restricted);
	open(my $fh, "<", "META.json") or do { print "META.json: missing\n"; print "0 passed, 1 failed\n"; exit 1 };
	local $/; my $meta = eval { decode_json(<$fh>) };
	check(ref $meta eq "HASH", "not a JSON object: $@");
	$meta ||= {};
	check(defined $meta->{name} && !ref $meta->{name} && scalar($meta->{name} =~ /^[A-Za-z][A-Za-z0-9_-]+$/), "name");
	check(defined $meta->{abstract} && !ref $meta->{abstract} && length $meta->{abstract}, "abstract");
	my $m = $meta->{maintainer};
	check(defined $m && (!ref $m || (ref $m eq "ARRAY" && @$m && !grep { ref } @$m)), "maintainer: a string or a list of strings");
	my $l = $meta->{license};
	check(defined $l && (ref $l eq "HASH" || !grep { !$licenses{$_} } (ref $l eq "ARRAY" ? @$l : ($l))), "license: one the spec names");
	check(scalar(($meta->{version} // "") =~ $semver), "version is a semantic version");
	check(($meta->{version} // "") eq "$control.0", "version equals pgxxl.control default_version $control (as $control.0)");
	my $p = $meta->{provides};
	check(ref $p eq "HASH" && exists $p->{$meta->{name} // ""}, "provides names the extension");
	for my $ext (keys %{ ref $p eq "HASH" ? $p : {} }) {
		check(ref $p->{$ext} eq "HASH" && defined $p->{$ext}{file} && -f $p->{$ext}{file}, "provides $ext: a file that exists");
		check(scalar(($p->{$ext}{version} // "") =~ $semver) && $p->{$ext}{version} eq ($meta->{version} // ""), "provides $ext: the version");
	}
	check((($p->{pgxxl} // {})->{file} // "") eq "sql/pgxxl--$control.sql", "provides pgxxl: the install script of the current version, sql/pgxxl--$control.sql");
	my $s = $meta->{"meta-spec"};
	check(ref $s eq "HASH" && ($s->{version} // "") eq "1.0.0", "meta-spec version 1.0.0");
	my $pr = $meta->{prereqs} // {};
	my $bad = 0;
	for my $phase (keys %$pr) {
		$bad++ unless $phase =~ /^(configure|build|runtime|test|develop)$/;
		for my $rel (keys %{ $pr->{$phase} }) {
			$bad++ unless $rel =~ /^(requires|recommends|suggests|conflicts)$/;
		}
	}
	check(!$bad, "prereqs: phases and relations the spec names");
	check(scalar(($pr->{runtime}{requires}{PostgreSQL} // "") =~ /^15\./), "prereqs: PostgreSQL 15 at runtime");
	print "meta: $passed passed, $failed failed\n$passed passed, $failed failed\n";
	exit($failed ? 1 : 0);
' "$control"
