#!/bin/sh
# fetch-debian-kernel.sh SPEC — download a Debian kernel package into a cache and
# print where its kernel image and module tree are, for fsnsuite -kernel/-modules.
#
# SPEC is one of:
#   debian-6.1        newest linux-image-6.1.0-N-amd64 apt knows (bookworm / bookworm-security)
#   debian-6.12       newest linux-image-6.12.N+debX-amd64 apt knows (bookworm-security/backports)
#   linux-image-...   an exact package name
#
# Output (stdout, shell-evalable):
#   KERNEL=/abs/path/boot/vmlinuz-VER
#   MODULES=/abs/path/lib/modules/VER
#   CONFIG=/abs/path/boot/config-VER
# With --args it prints "-kernel PATH -modules DIR" instead.
#
# The cache is $FSNSUITE_CACHE, else <repo>/.cache, else ~/.cache/fsnsuite.
# A package already unpacked there is reused without touching the network.
set -eu

usage() { echo "usage: $0 [--args] debian-6.1|debian-6.12|linux-image-PACKAGE" >&2; exit 2; }

mode=vars
if [ "${1:-}" = "--args" ]; then mode=args; shift; fi
[ $# -eq 1 ] || usage
spec=$1

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
if [ -n "${FSNSUITE_CACHE:-}" ]; then
	cache=$FSNSUITE_CACHE
elif [ -w "$repo" ]; then
	cache=$repo/.cache
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/fsnsuite
fi
cache=$cache/kernels
mkdir -p "$cache"

die() { echo "fetch-debian-kernel: $*" >&2; exit 1; }

# Newest package matching an extended regexp, from apt's lists (updating them once if empty).
newest() {
	pkgs=$(apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V)
	if [ -z "$pkgs" ]; then
		apt-get update >/dev/null 2>&1 || die "apt-get update failed"
		pkgs=$(apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V)
	fi
	echo "$pkgs" | tail -n 1
}

# Reuse an unpacked package for the spec when one is there (offline re-runs).
stamp_for_spec=$cache/$spec.pkg
case $spec in
debian-6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
debian-6.12) re='^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64$' ;;
linux-image-*) re="^$(printf %s "$spec" | sed 's/[.+]/\\&/g')\$" ;;
*) usage ;;
esac

pkg=""
if [ -f "$stamp_for_spec" ]; then
	pkg=$(cat "$stamp_for_spec")
	[ -f "$cache/$pkg/.unpacked" ] || pkg=""
fi
if [ -z "$pkg" ]; then
	pkg=$(newest "$re")
	[ -n "$pkg" ] || die "no package matches $spec (apt-cache search '$re'); check /etc/apt/sources.list*"
fi

dir=$cache/$pkg
if [ ! -f "$dir/.unpacked" ]; then
	command -v depmod >/dev/null 2>&1 || die "depmod not found (run scripts/vm/deps.sh)"
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp/deb"
	echo "fetch-debian-kernel: downloading $pkg" >&2
	if ! (cd "$dir.tmp/deb" && apt-get download "$pkg" >/dev/null 2>&1); then
		# Stale package lists: refresh, pick the newest again, retry once.
		apt-get update >/dev/null 2>&1 || die "apt-get update failed"
		case $spec in linux-image-*) ;; *) pkg=$(newest "$re") ;; esac
		rm -rf "$dir" "$dir.tmp"
		dir=$cache/$pkg
		mkdir -p "$dir.tmp/deb"
		echo "fetch-debian-kernel: downloading $pkg" >&2
		(cd "$dir.tmp/deb" && apt-get download "$pkg" >/dev/null) || die "apt-get download $pkg failed"
	fi
	deb=$(ls "$dir.tmp/deb"/*.deb | head -n 1)
	dpkg-deb -x "$deb" "$dir.tmp/root" || die "dpkg-deb -x $deb failed"
	rm -rf "$dir.tmp/deb"
	mv "$dir.tmp/root" "$dir"
	rmdir "$dir.tmp"
	# The package ships no modules.dep: build it, as the maintainer scripts would.
	for m in "$dir"/lib/modules/* "$dir"/usr/lib/modules/*; do
		[ -d "$m" ] || continue
		ver=$(basename "$m")
		base=${m%/lib/modules/*}
		depmod -b "$base" "$ver" || die "depmod -b $base $ver failed"
	done
	touch "$dir/.unpacked"
fi
printf '%s\n' "$pkg" >"$stamp_for_spec"

kernel=$(ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$kernel" ] || die "no boot/vmlinuz-* in $pkg"
ver=${kernel##*/vmlinuz-}
modules=""
for m in "$dir/lib/modules/$ver" "$dir/usr/lib/modules/$ver"; do
	[ -d "$m" ] && modules=$m && break
done
config=$dir/boot/config-$ver
[ -f "$config" ] || config=""

if [ "$mode" = args ]; then
	printf -- '-kernel %s' "$kernel"
	[ -n "$modules" ] && printf -- ' -modules %s' "$modules"
	printf '\n'
else
	printf 'KERNEL=%s\nMODULES=%s\nCONFIG=%s\n' "$kernel" "$modules" "$config"
fi
