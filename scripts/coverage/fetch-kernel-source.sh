#!/bin/sh
# fetch-kernel-source.sh [PACKAGE] — download Debian's kernel source package
# (default linux-source-6.1) into the cache and print the path of the unpacked
# tree. A tree already unpacked there is reused without touching the network.
# The package comes through the private apt configuration of
# scripts/debian-apt.sh (bullseye, bookworm, trixie-backports, sid: any
# linux-source-X.Y from 5.10 to 7.3), never the host's apt sources.
#
# The cache is $FSNSUITE_CACHE, else <repo>/.cache, else ~/.cache/fsnsuite;
# the tree lands in <cache>/ksrc/<package>_<version>/linux-source-X.Y.
# Cost: a ~140 MB download, ~1.4 GB unpacked.
set -eu

pkg=${1:-linux-source-6.1}
case $pkg in
linux-source-[0-9]*) ;;
*) echo "usage: $0 [linux-source-X.Y]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
cache=$(sh "$here/cache-dir.sh")/ksrc
mkdir -p "$cache"
die() { echo "fetch-kernel-source: $*" >&2; exit 1; }
aptdir=$(dirname "$cache")/apt
. "$here/../debian-apt.sh"

# Reuse the last unpacked version of this package (offline re-runs).
stamp=$cache/$pkg.dir
if [ -f "$stamp" ]; then
	dir=$(cat "$stamp")
	if [ -f "$dir/.unpacked" ]; then
		ls -d "$dir"/linux-source-* | head -n 1
		exit 0
	fi
fi

apt_ready
ver=$(apt_private apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	apt_update
	ver=$(apt_private apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
fi
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no $pkg in the private apt configuration ($aptdir/sources.list)"

dir=$cache/${pkg}_$ver
if [ ! -f "$dir/.unpacked" ]; then
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp/deb"
	echo "fetch-kernel-source: downloading $pkg $ver" >&2
	(cd "$dir.tmp/deb" && apt_private apt-get download "$pkg=$ver" >/dev/null 2>&1) || die "apt-get download $pkg=$ver failed"
	dpkg-deb -x "$dir.tmp/deb"/*.deb "$dir.tmp/root" || die "dpkg-deb -x failed"
	tarball=$(ls "$dir.tmp/root"/usr/src/linux-source-*.tar.* 2>/dev/null | head -n 1)
	[ -n "$tarball" ] || die "no usr/src/linux-source-*.tar.* in $pkg"
	mkdir -p "$dir.tmp/src"
	echo "fetch-kernel-source: unpacking $(basename "$tarball")" >&2
	tar -C "$dir.tmp/src" -xf "$tarball" || die "tar -xf $tarball failed"
	rm -rf "$dir.tmp/deb" "$dir.tmp/root"
	mv "$dir.tmp/src" "$dir"
	rmdir "$dir.tmp"
	touch "$dir/.unpacked"
fi
printf '%s\n' "$dir" >"$stamp"
ls -d "$dir"/linux-source-* | head -n 1
