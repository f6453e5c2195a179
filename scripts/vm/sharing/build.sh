#!/bin/sh
# build.sh — build the sharing profile's qemu plugin (fsnshare.so) for the
# host's qemu and print its path: <cache>/qemu-plugin/<qemu source
# version>/fsnshare-<hash of the sources>.so, reused while the sources and
# the header are unchanged. Needs gcc (no glib: the plugin API of qemu 7.2
# does not use it) and the header (fetch-qemu-plugin-header.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "sharing/build.sh: $*" >&2; exit 1; }
command -v gcc >/dev/null 2>&1 || die "gcc not found (apt-get install gcc)"
hdir=$(sh "$here/fetch-qemu-plugin-header.sh")
sum=$(cat "$here/fsnshare.c" "$here/fsnshare_core.c" "$here/fsnshare_core.h" "$hdir/qemu-plugin.h" | sha256sum | cut -c1-12)
so=$hdir/fsnshare-$sum.so
if [ ! -f "$so" ]; then
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -I "$hdir" -o "$so.tmp" \
		"$here/fsnshare.c" "$here/fsnshare_core.c" -lpthread || die "gcc failed"
	mv "$so.tmp" "$so"
fi
echo "$so"
