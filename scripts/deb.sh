#!/usr/bin/env bash
# deb.sh [OUTDIR] — what `make deb` runs: the Debian package
# postgresql-15-pgxxl_<version>_<arch>.deb, built by dpkg-buildpackage from
# debian/ (pg_buildext over debian/pgversions) in a copy of the tree (the
# files git tracks and the new ones it does not ignore, as they are now),
# so that the build's clean step leaves the working tree alone.  Prints the
# package's path last.  OUTDIR defaults to build/deb.
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"
out=${1:-$REPO/build/deb}
version=$(dpkg-parsechangelog -S Version)
control=$(sed -n "s/^default_version = '\(.*\)'/\1/p" pgxxl.control)
case $version in
"$control".*) ;;
*)
	echo "deb: debian/changelog's version $version does not follow pgxxl.control's $control" >&2
	exit 1
	;;
esac
rm -rf "$out"
mkdir -p "$out/pgxxl-$version"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$out/pgxxl-$version"
(cd "$out/pgxxl-$version" &&
	DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
	tail -n 40 "$out/build.log" >&2
	exit 1
}
ls "$out"/postgresql-15-pgxxl_"$version"_*.deb
