#!/bin/sh
# build-kernel.sh KSRC — build (or reuse) a gcov kernel for `make coverage`
# and print its build directory (the bzImage is arch/x86/boot/bzImage in it,
# the .gcno files sit next to fs/notify's objects).
#
# The kernel is tinyconfig + scripts/kernel.config + scripts/coverage/gcov.config
# with ONLY fs/notify instrumented: `GCOV_PROFILE := y` is added to the
# Makefiles of fs/notify in a private copy of KSRC (hard links where the cache
# is on KSRC's filesystem, so the copy is cheap; the patched Makefiles are new
# files, KSRC itself is never written) and the build is out of tree (O=).
#
# Cache: <cache>/coverage/<key>/{src,build}, key = sha256 of the source state
# (for a git tree: HEAD plus `git diff HEAD` plus untracked files under fs/ and
# include/; otherwise the path, size and mtime of every file), of the config
# fragments, of gcc's version and of $method below (bump it when the way this
# script builds changes). A finished build (build/.done) is reused as is.
# The cache is $FSNSUITE_CACHE, else <repo>/.cache, else ~/.cache/fsnsuite.
# JOBS (default 2) and NICE (default 19) set make's -j and niceness.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 KSRC" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ksrc=$(cd "$1" && pwd) || exit 2
. "$repo/scripts/ksrc-lib.sh"
die() { echo "coverage build: $*" >&2; exit 1; }
clean_tree "$ksrc" "coverage build" || exit 1

cache=$(sh "$here/cache-dir.sh")/coverage
mkdir -p "$cache"

frag=$here/gcov.config
method="fsnsuite-gcov-build 1: tinyconfig+fragments, GCOV_PROFILE in fs/notify/**/Makefile"

key=$(cache_key "$ksrc" "$method" "$repo/scripts/kernel.config" "$frag")
dir=$cache/$key
build=$dir/build
if [ -f "$build/.done" ]; then
	echo "coverage build: reusing $build" >&2
	echo "$build"
	exit 0
fi

echo "coverage build: building a gcov kernel from $ksrc in $dir (cache key $key)" >&2
rm -rf "$dir"
mkdir -p "$dir"
private_copy "$ksrc" "$dir/src" "coverage build"
# Instrument fs/notify only. Each patched Makefile is a new file (the hard link
# to KSRC's is removed first), so KSRC is untouched.
find "$dir/src/fs/notify" -name Makefile | while IFS= read -r mk; do
	{
		echo "GCOV_PROFILE := y  # added by fsnsuite scripts/coverage/build-kernel.sh"
		cat "$mk"
	} >"$mk.fsnsuite"
	rm -f "$mk"
	mv "$mk.fsnsuite" "$mk"
done

start=$(date +%s)
JOBS=${JOBS:-2} nice -n "${NICE:-19}" sh "$repo/scripts/vm/build-kernel.sh" "$dir/src" "$build" -f "$frag" >/dev/null
grep -qx 'CONFIG_GCOV_KERNEL=y' "$build/.config" || die "CONFIG_GCOV_KERNEL did not survive olddefconfig in $build/.config"
ls "$build"/fs/notify/*.gcno >/dev/null 2>&1 || die "no .gcno files in $build/fs/notify: fs/notify was not instrumented"
end=$(date +%s)
echo "coverage build: done in $((end - start))s; $(du -sh "$build" | cut -f1) in $build (the source copy is hard links)" >&2
touch "$build/.done"
echo "$build"
