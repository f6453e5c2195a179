#!/bin/sh
# build-kernel.sh SRC OUT [-f FRAGMENT]... [-d OPTION]... — build a minimal
# x86_64 bzImage from the kernel source tree SRC into the build directory OUT:
# tinyconfig plus scripts/kernel.config plus each config FRAGMENT given with -f
# (make coverage adds scripts/coverage/gcov.config), minus each OPTION given
# with -d (for example "-d FANOTIFY" to check how the VM runner reports a
# kernel without it). JOBS (default nproc) sets make's -j.
# Prints the path of the bzImage. Needs gcc, make, flex, bison, bc and
# libelf-dev (apt-get install build-essential flex bison bc libelf-dev).
set -eu

[ $# -ge 2 ] || { echo "usage: $0 SRC OUT [-f FRAGMENT]... [-d OPTION]..." >&2; exit 2; }
src=$(cd "$1" && pwd)
case $2 in
/*) out=$2 ;;
*) out=$PWD/$2 ;;
esac
# kbuild refuses a source or output directory whose path has a space or a
# colon; say so here, naming the way out, rather than in make's words.
for d in "$src" "$out"; do
	case $d in
	*[[:space:]:]*)
		echo "build-kernel: $d: kbuild cannot build in a path with a space or a colon (set FSNSUITE_CACHE to a directory without one)" >&2
		exit 2
		;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
shift 2
frag=$(cd "$(dirname "$0")/.." && pwd)/kernel.config

# The fragments, one path per line (a path may hold spaces).
nl='
'
frags=$frag
disable=""
while [ $# -gt 0 ]; do
	case $1 in
	-f) frags="$frags$nl$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
	-d) disable="$disable $2"; shift 2 ;;
	*) echo "$0: unknown argument $1" >&2; exit 2 ;;
	esac
done

# The options are parsed: the fragments become the positional parameters,
# as copies in OUT (merge_config.sh splits its file list at spaces, and a
# fragment of this repository has the repository's path, spaces and all).
set --
n=0
mkdir -p "$out/fsnsuite-fragments"
while IFS= read -r f; do
	n=$((n + 1))
	cp "$f" "$out/fsnsuite-fragments/$n.config"
	set -- "$@" "$out/fsnsuite-fragments/$n.config"
done <<FRAGS
$frags
FRAGS

make -s -C "$src" O="$out" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
for o in $disable; do
	"$src/scripts/config" --file "$out/.config" -d "$o"
done
make -s -C "$src" O="$out" olddefconfig >/dev/null
# Say which fragment options did not survive (missing dependencies).
# An option this tree's Kconfig does not define (renamed or removed, like
# PROC_SYSCTL, folded into SYSCTL in 7.x) is said as such, not as unset.
cat "$@" | grep '^CONFIG_.*=y' | while IFS= read -r l; do
	grep -qx "$l" "$out/.config" && continue
	opt=${l%%=*}
	if grep -rqsx --include='Kconfig*' "\(menu\)\?config ${opt#CONFIG_}" "$src"; then
		echo "build-kernel: note: $l not set in $out/.config (a dependency is missing)" >&2
	else
		echo "build-kernel: note: $opt is not an option of $src (renamed or removed there): left out" >&2
	fi
done
make -s -C "$src" O="$out" -j"${JOBS:-$(nproc)}" bzImage >&2
echo "$out/arch/x86/boot/bzImage"
