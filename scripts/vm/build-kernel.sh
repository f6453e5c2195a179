#!/bin/sh
# build-kernel.sh SRC OUT [-d OPTION]... — build a minimal x86_64 bzImage from
# the kernel source tree SRC into the build directory OUT: tinyconfig plus
# scripts/kernel.config, minus each OPTION given with -d (for example
# "-d FANOTIFY" to check how the VM runner reports a kernel without it).
# Prints the path of the bzImage. Needs gcc, make, flex, bison, bc and
# libelf-dev (apt-get install build-essential flex bison bc libelf-dev).
set -eu

[ $# -ge 2 ] || { echo "usage: $0 SRC OUT [-d OPTION]..." >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
frag=$(cd "$(dirname "$0")/.." && pwd)/kernel.config

make -s -C "$src" O="$out" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
while [ $# -gt 0 ]; do
	case $1 in
	-d) "$src/scripts/config" --file "$out/.config" -d "$2"; shift 2 ;;
	*) echo "$0: unknown argument $1" >&2; exit 2 ;;
	esac
done
make -s -C "$src" O="$out" olddefconfig >/dev/null
# Say which fragment options did not survive (missing dependencies).
grep '^CONFIG_.*=y' "$frag" | while IFS= read -r l; do
	grep -qx "$l" "$out/.config" || echo "build-kernel: note: $l not set in $out/.config" >&2
done
make -s -C "$src" O="$out" -j"$(nproc)" bzImage >&2
echo "$out/arch/x86/boot/bzImage"
