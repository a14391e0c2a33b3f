#!/usr/bin/env bash
# pg-regress-src.sh DIR — PostgreSQL 15's own regression tests (sql/, expected/,
# data/ of src/test/regress), which no binary package ships, unpacked into
# DIR/<version>/ from the Debian archive's source of postgresql-15; prints
# that directory.  The newest version that Debian's source indexes (bookworm
# and bookworm-security) list and its mirror serves is taken, and its
# tarball is checked against the index's SHA-256 before it is unpacked.  Nothing is fetched when DIR
# already holds a version.  Used by the TAP test that runs PostgreSQL's
# sorting queries with xxl.sort_in_plans on and off (070_sort_in_plans_pg.pl).
set -euo pipefail

dest=${1:?usage: $0 DIR}
mkdir -p "$dest"
have=$(find "$dest" -mindepth 1 -maxdepth 1 -type d -name '15.*' | sort -V | tail -n 1)
if [ -n "$have" ] && [ -f "$have/sql/window.sql" ]; then
	echo "$have"
	exit 0
fi

mirror=http://deb.debian.org
candidates=()
for suite in debian/dists/bookworm/main debian-security/dists/bookworm-security/main; do
	base=${suite%%/dists/*}
	# postgresql-15's stanza: version, directory and the orig tarball's checksum
	# (awk reads to the end: an early exit would break the pipe under pipefail)
	entry=$(curl -fsS "$mirror/$suite/source/Sources.xz" | xz -d |
		awk '/^Package: postgresql-15$/ { p = 1 } p && /^$/ { p = 0; done = 1 } p && !done') || continue
	ver=$(sed -n 's/^Version: //p' <<<"$entry" | head -n 1)
	dir=$(sed -n 's/^Directory: //p' <<<"$entry" | head -n 1)
	line=$(awk '/^Checksums-Sha256:/ { s = 1; next } s && /^ / && /orig\.tar/ { print; exit } s && !/^ / { s = 0 }' <<<"$entry")
	[ -n "$ver" ] && [ -n "$dir" ] && [ -n "$line" ] || continue
	candidates+=("$ver $mirror/$base/$dir/$(awk '{ print $3 }' <<<"$line") $(awk '{ print $1 }' <<<"$line")")
done
[ ${#candidates[@]} -gt 0 ] || { echo "pg-regress-src: no postgresql-15 source in Debian's indexes at $mirror" >&2; exit 1; }

# the newest whose tarball can be fetched (a suite's index may list a
# version whose sources its mirror does not serve)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
got=
while read -r ver url sum; do
	echo "pg-regress-src: fetching PostgreSQL ${ver%%-*}'s sources ($url)" >&2
	if curl -fsS -o "$tmp/src.tar" "$url"; then
		got=$ver best_sum=$sum best_url=$url
		break
	fi
done < <(printf '%s\n' "${candidates[@]}" | sort -rV)
[ -n "$got" ] || { echo "pg-regress-src: none of the listed sources could be fetched" >&2; exit 1; }
upstream=${got%%-*}
echo "$best_sum  $tmp/src.tar" | sha256sum -c --quiet - ||
	{ echo "pg-regress-src: checksum mismatch for $best_url" >&2; exit 1; }
tar -xaf "$tmp/src.tar" -C "$tmp" --wildcards '*/src/test/regress/sql/*' '*/src/test/regress/expected/*' \
	'*/src/test/regress/data/*'
mkdir -p "$dest/$upstream"
cp -r "$tmp"/postgresql-*/src/test/regress/{sql,expected,data} "$dest/$upstream/"
chmod -R a+rX "$dest"
echo "$dest/$upstream"
