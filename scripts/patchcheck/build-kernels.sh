#!/bin/sh
# build-kernels.sh KSRC PATCH — build the two kernels `make patchcheck`
# compares from one source tree: KSRC as it is (the base), then KSRC with
# PATCH applied, rebuilt incrementally in the same build directory. Prints
# "base DIR", "patched DIR" and "build_lock_wait SECONDS"; each DIR holds bzImage, config and
# release (the kernel release, e.g. 7.3.4-fsnbase and
# 7.3.4-fsnp-seed004-7.3-1a2b3c4d: the patch's name and hash, pc-lib.sh).
#
# The kernel is tinyconfig + scripts/kernel.config + patchcheck.config, with
# CONFIG_LOCALVERSION -fsnbase, or -fsnp-<patch name>-<hash> for the patched
# kernel (patch_localversion: within the 64-character UTS release). Cache: <cache>/patchcheck/<key>
# with key = sha256 of KSRC's state (scripts/ksrc-lib.sh), the fragments,
# gcc's version and $method: src/ (a private hard-link copy of KSRC), build/
# (O=), base/ and patched-<sha256 of PATCH><sha256 of its LOCALVERSION>/. A second patchcheck of the same
# base reuses base/ and costs only the patched build; the same patch again
# costs nothing.
#
# A patch that does not apply stops before anything is built or changed,
# with the failing hunks listed (patch --batch --forward --dry-run: never a
# prompt; a hunk that looks reversed or already applied is a failure too).
# After the patched build the copy is restored to KSRC's content (the
# patched files replaced by new files with the current time, so the next
# build recompiles them).
# JOBS (default 2) and NICE (default 19) set make's -j and niceness.
# Concurrent runs on one base take turns (the build lock, below): prints
# a third line, "build_lock_wait SECONDS". PC_BUILD_KERNEL replaces
# scripts/vm/build-kernel.sh (a test's fake).
set -eu

[ $# -eq 2 ] || { echo "usage: $0 KSRC PATCH" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/scripts/ksrc-lib.sh"
. "$here/pc-lib.sh"
who="patchcheck build"
die() { echo "$who: $*" >&2; exit 1; }
ksrc=$(cd "$1" && pwd) || exit 2
patch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
[ -f "$patch" ] || die "no patch file $2"
clean_tree "$ksrc" "$who" || exit 1
command -v patch >/dev/null || die "no patch(1): apt-get install patch"

cache=$(sh "$repo/scripts/coverage/cache-dir.sh")/patchcheck
frag=$here/patchcheck.config
method="fsnsuite-patchcheck-build 1: tinyconfig+fragments, LOCALVERSION -fsnbase/-fsnpatched, one O= dir"
key=$(cache_key "$ksrc" "$method" "$repo/scripts/kernel.config" "$frag")
dir=$cache/$key
psum=$(sha256sum <"$patch" | cut -c1-16)
# The patched kernel's release names the patch (patch_localversion), so
# the cache key of its build is the patch's content and that name.
kver=$(kernel_version "$ksrc/Makefile") || die "$ksrc/Makefile: no VERSION/PATCHLEVEL: not a kernel tree?"
lv=$(patch_localversion "$kver" "$patch")
out=$dir/patched-$psum$(printf '%s' "$lv" | sha256sum | cut -c1-8)

set_localversion() {
	"$dir/src/scripts/config" --file "$dir/build/.config" --set-str LOCALVERSION "$1" -d LOCALVERSION_AUTO
	nice -n "${NICE:-19}" make -s -C "$dir/src" O="$dir/build" olddefconfig >/dev/null
}

keep() { # keep DEST: the bzImage, config and release of the build
	mkdir -p "$1"
	cp "$dir/build/arch/x86/boot/bzImage" "$1/bzImage"
	cp "$dir/build/.config" "$1/config"
	cat "$dir/build/include/config/kernel.release" >"$1/release"
}

# Restore every file the patch touched to KSRC's content, as a new file
# (never through a hard link), or remove it when KSRC lacks it.
restore() {
	patch_files "$patch" | while IFS= read -r f; do
		rm -f "$dir/src/$f"
		if [ -f "$ksrc/$f" ]; then
			mkdir -p "$(dirname "$dir/src/$f")"
			cp "$ksrc/$f" "$dir/src/$f"
		fi
	done
}

mkdir -p "$dir"

# The build lock: src/ and build/ are one copy and one O= directory per
# base, and a patched build applies its patch to src/ and restores it
# after, so two builds on one base (two patchchecks started together) must
# not run at once. The lock is taken only when something is to be built
# (a patchcheck whose kernels are cached never waits), names its holder in
# build.holder, and is held until this script exits. A wait is bounded
# (PC_BUILD_LOCK_WAIT seconds, default 6 h) and counted: the last line of
# the output, "build_lock_wait SECONDS", goes into the summary's wall time.
lockwait=0
locked=0
take_lock() {
	[ "$locked" = 0 ] || return 0
	command -v flock >/dev/null || die "no flock(1) for the build lock: apt-get install util-linux"
	exec 9>>"$dir/build.lock"
	if ! flock -n 9; then
		# The holder writes build.holder just after taking the lock.
		holder=
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			holder=$(cat "$dir/build.holder" 2>/dev/null) && [ -n "$holder" ] && break
			sleep 0.2
		done
		[ -n "$holder" ] || holder="a process that named no holder"
		echo "$who: waiting for the build lock $dir/build.lock, held by $holder" >&2
		t0=$(date +%s)
		flock -w "${PC_BUILD_LOCK_WAIT:-21600}" 9 ||
			die "gave up after ${PC_BUILD_LOCK_WAIT:-21600}s waiting for the build lock $dir/build.lock, held by $holder"
		lockwait=$(($(date +%s) - t0))
		echo "$who: waited ${lockwait}s for the build lock" >&2
	fi
	printf 'pid %s (patchcheck build of %s), since %s\n' "$$" "$(basename "$patch")" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$dir/build.holder"
	# Gone with the lock (a later waiter must not name this run).
	trap 'rm -f "$dir/build.holder"' EXIT
	locked=1
}

[ -f "$dir/base/.done" ] || take_lock
if [ ! -f "$dir/base/.done" ]; then
	echo "$who: building the base kernel from $ksrc in $dir (cache key $key)" >&2
	# A copy made whole before (src.done) is kept: an interrupted build
	# resumes where make left it.
	if [ ! -f "$dir/src.done" ]; then
		rm -rf "$dir/src" "$dir/build" "$dir/base"
		private_copy "$ksrc" "$dir/src" "$who"
		touch "$dir/src.done"
	fi
	rm -rf "$dir/base"
	mkdir -p "$dir/build"
	printf 'CONFIG_LOCALVERSION="-fsnbase"\n' >"$dir/localversion.config"
	start=$(date +%s)
	JOBS=${JOBS:-2} nice -n "${NICE:-19}" sh "${PC_BUILD_KERNEL:-$repo/scripts/vm/build-kernel.sh}" "$dir/src" "$dir/build" -f "$frag" -f "$dir/localversion.config" >/dev/null
	keep "$dir/base"
	echo "$(( $(date +%s) - start ))" >"$dir/base/build_seconds"
	touch "$dir/base/.done"
	echo "$who: base kernel $(cat "$dir/base/release") built in $(cat "$dir/base/build_seconds")s" >&2
else
	echo "$who: reusing the base kernel $(cat "$dir/base/release") in $dir/base" >&2
fi

[ -f "$out/.done" ] || take_lock
if [ ! -f "$out/.done" ]; then
	# An interrupted earlier run may have left a patch applied.
	restore
	hunks=$(grep -c '^@@ ' "$patch" || true)
	if [ "$hunks" -eq 0 ]; then
		echo "$who: $patch has no hunks (empty or comments only): the patched kernel is the base tree under another LOCALVERSION" >&2
	elif ! log=$(patch -p1 --batch --forward --dry-run -d "$dir/src" <"$patch" 2>&1); then
		echo "$who: $patch does not apply to $ksrc:" >&2
		echo "$log" | grep -E 'FAILED|Reversed|already applied|can.t find file|No file to patch|malformed|Only garbage' | sed 's/^/  /' >&2
		echo "$log" | grep -q 'Reversed\|already applied' &&
			echo "  (a hunk that looks reversed or already applied: was the patch made against another tree, or is it in KSRC already?)" >&2
		exit 3
	fi
	# New files for every file the patch changes: patch must not write
	# through a hard link into KSRC.
	unlink_files "$dir/src" "$patch"
	if [ "$hunks" -gt 0 ]; then
		patch -p1 --batch --forward --silent -d "$dir/src" <"$patch" >&2
	fi
	echo "$who: building the patched kernel (incremental) in $dir" >&2
	set_localversion "$lv"
	start=$(date +%s)
	if ! nice -n "${NICE:-19}" make -s -C "$dir/src" O="$dir/build" -j"${JOBS:-2}" bzImage >&2; then
		restore
		set_localversion -fsnbase
		die "the patched kernel does not build (see make's output above); the source copy is restored"
	fi
	rm -rf "$out"
	keep "$out"
	echo "$(( $(date +%s) - start ))" >"$out/build_seconds"
	cp "$patch" "$out/patch"
	touch "$out/.done"
	echo "$who: patched kernel $(cat "$out/release") built in $(cat "$out/build_seconds")s" >&2
	restore
	set_localversion -fsnbase
else
	echo "$who: reusing the patched kernel $(cat "$out/release") in $out" >&2
fi
echo "base $dir/base"
echo "patched $out"
echo "build_lock_wait $lockwait"
