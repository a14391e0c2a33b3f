#!/usr/bin/env bash
# deps.sh — installs what building and testing pgxxl needs on Debian 12, and
# nothing when it is all there (checked with dpkg-query, so a ready machine
# never touches apt).
#
#   scripts/deps.sh          PostgreSQL 15 server + headers, TAP modules, gcc + libc headers
#   scripts/deps.sh --bench  the same plus what the benchmarks compare against
#                            and draw with (STXXL, libdivsufsort, gnuplot)
set -euo pipefail

pkgs=(postgresql-15 postgresql-server-dev-15 libipc-run-perl gcc libc6-dev make)
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
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
	SUDO=(sudo)
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
