#!/usr/bin/env bash
# deps.sh — installs what building and testing pgxxl needs on Debian 12, and
# nothing when it is all there (checked with dpkg-query, so a ready machine
# never touches apt).
#
#   scripts/deps.sh          PostgreSQL 15 server + headers, ICU headers, TAP modules,
#                            gcc + libc headers, and the en_US.UTF-8 locale that
#                            the collation tests compare in, and pgRouting
#                            (with PostGIS), the oracle of the shortest-path tests,
#                            and curl, xz and bzip2 to fetch PostgreSQL's own
#                            regression tests (scripts/pg-regress-src.sh), and
#                            libdivsufsort, the oracle of the LCP unit test
#   scripts/deps.sh --bench  the same plus what the benchmarks compare against
#                            and draw with (STXXL, libdivsufsort, gnuplot)
set -euo pipefail

pkgs=(postgresql-15 postgresql-server-dev-15 libpq-dev libicu-dev libipc-run-perl gcc libc6-dev make locales
	postgresql-15-pgrouting postgresql-15-postgis-3 curl xz-utils bzip2 libdivsufsort-dev
	debhelper postgresql-server-dev-all dpkg-dev)
case "${1:-}" in
	--bench) pkgs+=(libstxxl-dev libdivsufsort-dev gnuplot-nox) ;;
	"") ;;
	*) echo "usage: $0 [--bench]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done

# en_US.UTF-8 for the libc collation tests; a server started before the
# locale existed would not know it, so this runs before any test server.
ensure_locale() {
	if locale -a 2>/dev/null | grep -qix 'en_US.utf8'; then
		return 0
	fi
	echo "deps: generating the en_US.UTF-8 locale"
	if [ -f /etc/locale.gen ] && grep -q '^# *en_US.UTF-8 UTF-8' /etc/locale.gen; then
		"${SUDO[@]}" sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' /etc/locale.gen
	elif ! grep -q '^en_US.UTF-8 UTF-8' /etc/locale.gen 2>/dev/null; then
		echo 'en_US.UTF-8 UTF-8' | "${SUDO[@]}" tee -a /etc/locale.gen >/dev/null
	fi
	"${SUDO[@]}" locale-gen >/dev/null
}

SUDO=()
[ "$(id -u)" -ne 0 ] && SUDO=(sudo)

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	if [ ${#SUDO[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
		echo "deps: need root (or sudo) to install ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt_opts=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

	# Update the package lists only when they are missing or the install fails
	# with the ones we have (they may be stale).
	if ! compgen -G '/var/lib/apt/lists/*_Packages' >/dev/null; then
		"${SUDO[@]}" apt-get update -q </dev/null
		"${SUDO[@]}" apt-get install "${apt_opts[@]}" --no-install-recommends "${missing[@]}" </dev/null
	elif ! "${SUDO[@]}" apt-get install "${apt_opts[@]}" --no-install-recommends "${missing[@]}" </dev/null; then
		"${SUDO[@]}" apt-get update -q </dev/null
		"${SUDO[@]}" apt-get install "${apt_opts[@]}" --no-install-recommends "${missing[@]}" </dev/null
	fi
fi
ensure_locale
