#!/bin/sh
# fetch-kernel-tools.sh — put the kernel's own test tools (kunit.py and its
# parser, run_kselftest.sh with kselftest/runner.sh) from Debian's
# linux-source-6.12 into the cache, once, and print the directory.
#
# The cache is $FSNSUITE_CACHE, else <repo>/.cache; the tools land in
# <cache>/kernel-tools/linux-source-6.12/ (tools/testing/kunit and
# tools/testing/selftests/{run_kselftest.sh,kselftest}). A second run reuses
# them without touching the network. The package is 153 MB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${FSNSUITE_CACHE:-$here/../.cache}
dst=$cache/kernel-tools/linux-source-6.12
if [ -x "$dst/tools/testing/kunit/kunit.py" ] && [ -x "$dst/tools/testing/selftests/run_kselftest.sh" ]; then
	echo "$dst"
	exit 0
fi
command -v apt-get >/dev/null || { echo "fetch-kernel-tools: apt-get not found (Debian-like systems only)" >&2; exit 1; }
work=$(mktemp -d "$cache/kernel-tools.XXXXXX" 2>/dev/null || { mkdir -p "$cache" && mktemp -d "$cache/kernel-tools.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get download linux-source-6.12 >&2 || { apt-get update -qq >&2 && apt-get download linux-source-6.12 >&2; }
deb=$(ls linux-source-6.12_*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x --wildcards './usr/src/linux-source-6.12.tar.xz'
rm -f "$deb"
tar -xJf usr/src/linux-source-6.12.tar.xz --wildcards \
	'linux-source-6.12/tools/testing/kunit/*' \
	'linux-source-6.12/tools/testing/selftests/run_kselftest.sh' \
	'linux-source-6.12/tools/testing/selftests/kselftest/*'
mkdir -p "$(dirname "$dst")"
rm -rf "$dst"
mv linux-source-6.12 "$dst"
echo "$dst"
