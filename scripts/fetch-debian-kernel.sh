#!/bin/sh
# fetch-debian-kernel.sh SPEC — download a Debian kernel into a cache and print
# where its kernel image and module tree are, for fsnsuite -kernel/-modules.
#
# SPEC is one of:
#   debian-5.10       newest linux-image-5.10.0-N-amd64 (bullseye, bullseye-security)
#   debian-6.1        newest linux-image-6.1.0-N-amd64 (bookworm, bookworm-security)
#   debian-X.Y        newest linux-image-X.Y.N+debD-amd64 of any suite below, e.g.
#                     debian-6.12 (bookworm-security/backports), debian-7.3
#                     (trixie-backports), debian-7.2 (sid)
#   debian-X.Y.Z      that exact point release: linux-image-X.Y.Z+debD-amd64 of
#                     the newer suites, or the linux-image-X.Y.0-N-amd64 whose
#                     package version is X.Y.Z-... (5.10, 6.1)
#   linux-image-...   an exact package name
#   linux-binary-...  the package that holds a newer suite's image: its
#                     linux-image-... of the same version
#
# Packages come through a private apt configuration in the cache
# (scripts/debian-apt.sh: its own sources list, package lists and archive
# directory) carrying bullseye, bookworm, trixie-backports and sid: the
# host's apt sources are never read or changed. FSNSUITE_DEBIAN_MIRROR and
# FSNSUITE_DEBIAN_SECURITY set the archive URLs (default: deb.debian.org).
#
# Newer suites split a kernel: linux-image-VER is then an empty meta package
# that depends on linux-binary-VER (usr/lib/modules/VER/vmlinuz),
# linux-modules-VER (the modules) and linux-base-VER (config, System.map).
# Every one of those the image package depends on is downloaded and unpacked
# into the same tree.
#
# Output (stdout, shell-evalable):
#   KERNEL=/abs/path/.../vmlinuz[-VER]
#   MODULES=/abs/path/.../lib/modules/VER
#   CONFIG=/abs/path/.../config[-VER]
# With --args it prints "-kernel PATH -modules DIR" instead; with --which only
# the image package the SPEC names (nothing is downloaded).
#
# The cache is $FSNSUITE_CACHE, else <repo>/.cache (a writable repository
# whose path has no space or colon), else ~/.cache/fsnsuite.
# A package already unpacked there is reused without touching the network.
set -eu

usage() {
	echo "usage: $0 [--args] debian-5.10|debian-6.1|debian-X.Y|debian-X.Y.Z|linux-image-PACKAGE|linux-binary-PACKAGE" >&2
	exit 2
}

mode=vars
if [ "${1:-}" = "--args" ]; then mode=args; shift; fi
if [ "${1:-}" = "--which" ]; then mode=which; shift; fi
[ $# -eq 1 ] || usage
spec=$1

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
if [ -n "${FSNSUITE_CACHE:-}" ]; then
	cachetop=$FSNSUITE_CACHE
# A repository path with a space or a colon gets the home cache, as
# scripts/coverage/cache-dir.sh picks it (kbuild refuses such a path).
elif [ -w "$repo" ] && case $repo in *[[:space:]:]*) false ;; esac; then
	cachetop=$repo/.cache
else
	cachetop=${XDG_CACHE_HOME:-$HOME/.cache}/fsnsuite
fi
cache=$cachetop/kernels
mkdir -p "$cache"

die() { echo "fetch-debian-kernel: $*" >&2; exit 1; }

# linux-binary-VER is what holds a newer suite's image; the kernel is its
# linux-image-VER (which depends on it, and on the modules and base).
case $spec in linux-binary-*) spec=linux-image-${spec#linux-binary-} ;; esac
point=""
case $spec in
debian-5.10) re='^linux-image-5\.10\.0-[0-9]+-amd64$' ;;
debian-6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
debian-[0-9]*.[0-9]*.[0-9]*)
	point=${spec#debian-}
	printf %s "$point" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || usage
	re="^linux-image-$(printf %s "$point" | sed 's/\./\\./g')\\+deb[0-9]+-amd64\$"
	;;
debian-[0-9]*.[0-9]*)
	v=${spec#debian-}
	printf %s "$v" | grep -Eq '^[0-9]+\.[0-9]+$' || usage
	re="^linux-image-$(printf %s "$v" | sed 's/\./\\./g')\\.[0-9]+\\+deb[0-9]+-amd64\$"
	;;
linux-image-*) re="^$(printf %s "$spec" | sed 's/[.+]/\\&/g')\$" ;;
*) usage ;;
esac

# The private apt configuration (scripts/debian-apt.sh): every path apt
# reads or writes is under $aptdir; the host's sources are never used.
aptdir=$cachetop/apt
. "$here/debian-apt.sh"

# Newest package matching an extended regexp, from the private lists
# (updating them once if they hold none).
newest() {
	apt_ready
	pkgs=$(apt_private apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V)
	if [ -z "$pkgs" ]; then
		apt_update
		pkgs=$(apt_private apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V)
	fi
	echo "$pkgs" | tail -n 1
}

# The packages that make up the kernel of image package $1: itself and the
# linux-binary/linux-modules/linux-base packages it depends on, if any.
parts_of() {
	printf '%s\n' "$1"
	apt_private apt-cache depends "$1" 2>/dev/null |
		sed -n 's/^ *Depends: *\(linux-\(binary\|modules\|base\)-[^ ]*\).*/\1/p' | sort -u
}

# Reuse an unpacked package for the spec when one is there (offline re-runs).
stamp_for_spec=$cache/$spec.pkg
pkg=""
if [ -f "$stamp_for_spec" ]; then
	pkg=$(cat "$stamp_for_spec")
	[ -f "$cache/$pkg/.unpacked" ] || pkg=""
fi
if [ -z "$pkg" ] && [ -f "$cache/$spec/.unpacked" ]; then
	case $spec in linux-image-*) pkg=$spec ;; esac
fi
# An older suite names its image by ABI (linux-image-6.1.0-57-amd64): the
# point release is in the package's version (6.1.192-1).
by_version() { # X.Y.Z
	mm=$(printf %s "$1" | cut -d. -f1,2 | sed 's/\./\\./g')
	for p in $(apt_private apt-cache search --names-only "^linux-image-$mm\\.0-[0-9]+-amd64\$" 2>/dev/null | awk '{print $1}' | sort -rV); do
		if apt_private apt-cache show "$p" 2>/dev/null | grep -q "^Version: $(printf %s "$1" | sed 's/\./\\./g')-"; then
			echo "$p"
			return
		fi
	done
}
if [ -z "$pkg" ]; then
	pkg=$(newest "$re")
	[ -n "$pkg" ] || [ -z "$point" ] || pkg=$(by_version "$point")
	if [ -z "$pkg" ]; then
		have=$(apt_private apt-cache search --names-only '^linux-image-[0-9][^ ]*[0-9]-amd64$' 2>/dev/null | awk '{print $1}' | sort -V | tr '\n' ' ')
		die "no package matches $spec (apt-cache search '$re' in $aptdir/sources.list); available: $have"
	fi
fi
# --which: only the package the spec names, nothing downloaded.
if [ "$mode" = which ]; then
	echo "$pkg"
	exit 0
fi

download() { # dir pkg...
	d=$1
	shift
	(cd "$d" && apt_private apt-get download "$@" >"$d/download.log" 2>&1)
}

dir=$cache/$pkg
if [ ! -f "$dir/.unpacked" ]; then
	command -v depmod >/dev/null 2>&1 || die "depmod not found (run scripts/vm/deps.sh)"
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp/deb"
	parts=$(parts_of "$pkg")
	echo "fetch-debian-kernel: downloading" $parts >&2
	# shellcheck disable=SC2086 # one word per package
	if ! download "$dir.tmp/deb" $parts; then
		# Stale package lists: refresh, pick the newest again, retry once.
		apt_update
		case $spec in linux-image-*) ;; *) pkg=$(newest "$re") ;; esac
		rm -rf "$dir" "$dir.tmp"
		dir=$cache/$pkg
		mkdir -p "$dir.tmp/deb"
		parts=$(parts_of "$pkg")
		echo "fetch-debian-kernel: downloading" $parts >&2
		# shellcheck disable=SC2086
		download "$dir.tmp/deb" $parts || die "apt-get download $parts failed: $(tail -n 3 "$dir.tmp/deb/download.log")"
	fi
	for deb in "$dir.tmp/deb"/*.deb; do
		dpkg-deb -x "$deb" "$dir.tmp/root" || die "dpkg-deb -x $deb failed"
	done
	rm -rf "$dir.tmp/deb"
	mv "$dir.tmp/root" "$dir"
	rmdir "$dir.tmp"
	# The packages ship no modules.dep: build it, as the maintainer scripts would.
	for m in "$dir"/lib/modules/* "$dir"/usr/lib/modules/*; do
		[ -d "$m/kernel" ] || continue
		ver=$(basename "$m")
		base=${m%/lib/modules/*}
		depmod -b "$base" "$ver" || die "depmod -b $base $ver failed"
	done
	touch "$dir/.unpacked"
fi
printf '%s\n' "$pkg" >"$stamp_for_spec"

# The image: boot/vmlinuz-VER (the classic layout) or
# usr/lib/modules/VER/vmlinuz (linux-binary-VER).
kernel=$(ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -n 1)
if [ -n "$kernel" ]; then
	ver=${kernel##*/vmlinuz-}
else
	kernel=$(ls "$dir"/usr/lib/modules/*/vmlinuz "$dir"/lib/modules/*/vmlinuz 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || die "no boot/vmlinuz-* nor lib/modules/*/vmlinuz in $pkg (and the packages it depends on)"
	ver=$(basename "$(dirname "$kernel")")
fi
modules=""
for m in "$dir/lib/modules/$ver" "$dir/usr/lib/modules/$ver"; do
	[ -d "$m/kernel" ] && modules=$m && break
done
config=""
for c in "$dir/boot/config-$ver" "$dir/usr/lib/modules/$ver/config" "$dir/lib/modules/$ver/config"; do
	[ -f "$c" ] && config=$c && break
done

if [ "$mode" = args ]; then
	printf -- '-kernel %s' "$kernel"
	[ -n "$modules" ] && printf -- ' -modules %s' "$modules"
	printf '\n'
else
	printf 'KERNEL=%s\nMODULES=%s\nCONFIG=%s\n' "$kernel" "$modules" "$config"
fi
