#!/bin/sh
# build-kernel.sh KSRC — build (or reuse) the kernel `make mutants` mutates
# and print the directory holding its source copy and build directory
# (DIR/src, DIR/build; the bzImage is DIR/build/arch/x86/boot/bzImage).
#
# The kernel is tinyconfig + scripts/kernel.config + scripts/mutants/mutants.config,
# without gcov. DIR/src is a private copy of KSRC (hard links where the cache
# is on KSRC's filesystem, as scripts/coverage/build-kernel.sh makes its copy):
# fsnsuite mutants replaces a file of it with a new file for each mutant
# (never writing through a hard link into KSRC) and rebuilds incrementally in
# DIR/build. A finished build (build/.done) is reused: fsnsuite mutants first
# restores every fs/notify file of the copy that differs from KSRC and runs
# make, so an interrupted run leaves nothing behind.
#
# Cache: <cache>/mutants/<key>, key = sha256 of the source state (as
# scripts/coverage/build-kernel.sh computes it), of the config fragments, of
# gcc's version and of $method below.
# JOBS (default 2) and NICE (default 19) set make's -j and niceness.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 KSRC" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ksrc=$(cd "$1" && pwd) || exit 2
. "$repo/scripts/ksrc-lib.sh"
clean_tree "$ksrc" "mutants build" || exit 1

cache=$(sh "$repo/scripts/coverage/cache-dir.sh")/mutants
mkdir -p "$cache"
frag=$here/mutants.config
method="fsnsuite-mutants-build 1: tinyconfig+fragments, no gcov"

key=$(cache_key "$ksrc" "$method" "$repo/scripts/kernel.config" "$frag")
dir=$cache/$key
# One build of a key at a time: a second waits for the first, then reuses
# it (a build that died leaves no .done and is started again). The lock goes
# with the last process holding it (make's children inherit it).
exec 9>"$dir.lock"
if ! flock -n 9; then
	echo "mutants build: waiting for another build of $dir" >&2
	# Bounded: a build takes minutes; a lock held for hours is a stuck or
	# foreign holder, named rather than waited on for ever.
	if ! flock -w 7200 9; then
		echo "mutants build: $dir.lock held for more than 2 h by: $(lslocks -n -o PID,COMMAND,PATH 2>/dev/null | grep -F "$dir.lock" | tr -s ' ' | tr '\n' ';')" >&2
		exit 1
	fi
fi
if [ -f "$dir/build/.done" ]; then
	echo "mutants build: reusing $dir" >&2
	echo "$dir"
	exit 0
fi

# A campaign on a half-built directory holds DIR.in-use (fsnsuite mutants'
# lock, beside DIR): the directory is not removed under it.
exec 8>"$dir.in-use"
if ! flock -n 8; then
	echo "mutants build: $dir is in use by an fsnsuite mutants ($dir.in-use is locked) but not finished: not rebuilding it" >&2
	exit 1
fi
echo "mutants build: building the kernel to mutate from $ksrc in $dir (cache key $key)" >&2
rm -rf "$dir"
mkdir -p "$dir"
private_copy "$ksrc" "$dir/src" "mutants build"
start=$(date +%s)
JOBS=${JOBS:-2} nice -n "${NICE:-19}" sh "$repo/scripts/vm/build-kernel.sh" "$dir/src" "$dir/build" -f "$frag" >/dev/null
end=$(date +%s)
echo "mutants build: done in $((end - start))s; $(du -sh "$dir/build" | cut -f1) in $dir/build" >&2
touch "$dir/build/.done"
exec 8>&-
echo "$dir"
