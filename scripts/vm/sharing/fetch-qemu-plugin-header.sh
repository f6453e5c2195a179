#!/bin/sh
# fetch-qemu-plugin-header.sh — print the directory holding qemu-plugin.h, the
# TCG plugin API header of the host's qemu, taken from Debian's qemu source
# package of the same version (the version of the installed
# qemu-system-x86's source, e.g. 1:7.2+dfsg-7+deb12u18 on bookworm).
#
# The source comes through the private apt configuration of
# scripts/debian-apt.sh with deb-src lines for bookworm (in an apt directory
# of its own, <cache>/apt-src), never the host's apt sources. Only
# include/qemu/qemu-plugin.h is taken from the upstream tarball, and every
# Debian patch of debian/patches/series that touches it is applied, in order.
# The result is cached in <cache>/qemu-plugin/<version>/ and reused offline.
# Cost: the source package's download (about 120 MB for 7.2), once.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=$(sh "$here/../../coverage/cache-dir.sh")
die() { echo "fetch-qemu-plugin-header: $*" >&2; exit 1; }

ver=${FSNSUITE_QEMU_SOURCE_VERSION:-$(dpkg-query -W -f '${source:Version}' qemu-system-x86 2>/dev/null || true)}
[ -n "$ver" ] || die "qemu-system-x86 is not installed (scripts/vm/deps.sh) and FSNSUITE_QEMU_SOURCE_VERSION is not set"
case $ver in
*[!0-9A-Za-z.+:~-]*) die "unexpected version string '$ver'" ;;
esac
out=$cache/qemu-plugin/$(printf '%s' "$ver" | tr ':' '_')
if [ -f "$out/qemu-plugin.h" ]; then
	echo "$out"
	exit 0
fi

aptdir=$cache/apt-src
apt_deb_src="bookworm bookworm-updates bookworm-security"
. "$here/../../debian-apt.sh"
apt_ready

work=$out.tmp
rm -rf "$work"
mkdir -p "$work/dl"
echo "fetch-qemu-plugin-header: downloading Debian's qemu source $ver" >&2
(cd "$work/dl" && apt_private apt-get source --download-only -q "qemu=$ver" >"$work/source.log" 2>&1) || {
	apt_update
	(cd "$work/dl" && apt_private apt-get source --download-only -q "qemu=$ver" >"$work/source.log" 2>&1) ||
		die "apt-get source qemu=$ver failed (see $work/source.log)"
}
orig=$(ls "$work"/dl/qemu_*.orig.tar.* 2>/dev/null | head -n 1)
deb=$(ls "$work"/dl/qemu_*.debian.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] && [ -n "$deb" ] || die "no orig or debian tarball in $work/dl"
mkdir -p "$work/src"
tar -C "$work/src" -xf "$orig" --wildcards '*/include/qemu/qemu-plugin.h' || die "no include/qemu/qemu-plugin.h in $(basename "$orig")"
top=$(ls -d "$work"/src/*/ | head -n 1)
tar -C "$top" -xf "$deb" debian/patches || die "no debian/patches in $(basename "$deb")"
if [ -f "$top/debian/patches/series" ]; then
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/debian/patches/series" | while read -r p _; do
		if grep -q '^+++ .*include/qemu/qemu-plugin\.h' "$top/debian/patches/$p"; then
			echo "fetch-qemu-plugin-header: applying $p" >&2
			(cd "$top" && patch -s -p1 -i "debian/patches/$p") || die "patch $p failed"
		fi
	done
fi
mkdir -p "$out"
cp "$top/include/qemu/qemu-plugin.h" "$out/qemu-plugin.h"
printf '%s\n' "$ver" >"$out/version"
rm -rf "$work"
echo "$out"
