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
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
frag=$(cd "$(dirname "$0")/.." && pwd)/kernel.config

frags=$frag
disable=""
while [ $# -gt 0 ]; do
	case $1 in
	-f) frags="$frags $(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
	-d) disable="$disable $2"; shift 2 ;;
	*) echo "$0: unknown argument $1" >&2; exit 2 ;;
	esac
done

make -s -C "$src" O="$out" tinyconfig >/dev/null
# shellcheck disable=SC2086
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" $frags >/dev/null
for o in $disable; do
	"$src/scripts/config" --file "$out/.config" -d "$o"
done
make -s -C "$src" O="$out" olddefconfig >/dev/null
# Say which fragment options did not survive (missing dependencies).
# shellcheck disable=SC2086
# An option this tree's Kconfig does not define (renamed or removed, like
# PROC_SYSCTL, folded into SYSCTL in 7.x) is said as such, not as unset.
cat $frags | grep '^CONFIG_.*=y' | while IFS= read -r l; do
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
