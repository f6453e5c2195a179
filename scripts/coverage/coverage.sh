#!/bin/sh
# coverage.sh [KSRC] — what `make coverage` runs: build (or reuse) a kernel
# from KSRC with only fs/notify instrumented for gcov, run the correctness
# suite on it under qemu, bring the .gcda files back and print fs/notify's
# line coverage per file and per function, and the functions never executed.
#
# KSRC defaults to Debian's linux-source-6.1 (fetched into .cache/ksrc).
# BASE=<git rev> (KSRC a git tree): also list every line changed since BASE
# (committed or not) in fs/notify and include/linux/fsnotify*.h and whether
# the suite ran it. COV_DIFF=<file> instead: a unified diff (patch -p1)
# already applied to KSRC whose added or changed lines to list (make
# patchcheck's coverage step).
# Environment: BASE, COV_DIFF, VM_CPUS (2), VM_MEM (2048), VM_TIMEOUT (60m),
# COV_RESULTS (results/coverage), FSNSUITE_VM_LOCK (a file flock'ed around
# the VM run), COV_FUNCTIONS=1 (every function's
# coverage), JOBS/NICE for the kernel build. Runner flags (e.g. -run REGEX)
# may follow KSRC. Exits with the suite's status once the report is printed.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/scripts/coverage
die() { echo "coverage: $*" >&2; exit 1; }

ksrc=${1:-}
[ $# -gt 0 ] && shift
sh "$top/scripts/vm/deps.sh"
sh "$here/deps.sh"
if [ -z "$ksrc" ]; then
	ksrc=$(sh "$here/fetch-kernel-source.sh")
fi
ksrc=$(cd "$ksrc" && pwd) || die "KSRC $ksrc: no such directory"

results=${COV_RESULTS:-$top/results/coverage}
rm -rf "$results"
mkdir -p "$results"

patch=""
if [ -n "${BASE:-}" ]; then
	git -C "$ksrc" rev-parse --verify -q "$BASE^{commit}" >/dev/null ||
		die "BASE=$BASE is not a commit of $ksrc (BASE needs a git KSRC)"
	patch=$results/patch.diff
	# Against the work tree: the patch is what was built, committed or not.
	git -C "$ksrc" diff --no-color --no-ext-diff -U0 "$BASE" -- fs/notify 'include/linux/fsnotify*.h' >"$patch"
	echo "coverage: BASE=$BASE: $(awk '/^\+/ && !/^\+\+\+ /{n++} END{print n+0}' "$patch") added/changed lines in fs/notify and include/linux/fsnotify*.h" >&2
elif [ -n "${COV_DIFF:-}" ]; then
	[ -f "$COV_DIFF" ] || die "COV_DIFF=$COV_DIFF: no such file"
	patch=$results/patch.diff
	cp "$COV_DIFF" "$patch"
	echo "coverage: COV_DIFF=$COV_DIFF: $(awk '/^\+/ && !/^\+\+\+ /{n++} END{print n+0}' "$patch") added/changed lines" >&2
fi

build=$(sh "$here/build-kernel.sh" "$ksrc")
src=$(dirname "$build")/src
tool=$(dirname "$build")/fsncov
(cd "$top" && CGO_ENABLED=0 go build -trimpath -o "$tool" ./harness/cmd/fsncov)

cpus=${VM_CPUS:-2}
set -- -kernel "$build/arch/x86/boot/bzImage" -results "$results" -j="$cpus" \
	-vm-cpus "$cpus" -vm-mem "${VM_MEM:-2048}" -vm-timeout "${VM_TIMEOUT:-60m}" "$@"
echo "coverage: $top/bin/fsnsuite $*" >&2
start=$(date +%s)
rc=0
# The TAP stream is kept in results.tap; stdout is for the report.
# FSNSUITE_VM_LOCK: take turns with other VM runs (scripts/vm/vmlock.sh).
. "$top/scripts/vm/vmlock.sh"
vm_lock_check coverage
set -- vm_locked env FSNSUITE_VM_GCOV_DIR="$results/gcda" "$top/bin/fsnsuite" "$@"
"$@" >/dev/null || rc=$?
end=$(date +%s)
if [ "$rc" = 75 ] && [ -n "${FSNSUITE_VM_LOCK:-}" ]; then
	die "the VM lock $FSNSUITE_VM_LOCK was held for more than 3 hours by: $(vm_lock_holders)"
fi
echo "coverage: suite exit $rc, wall time $((end - start))s (TAP in $results/results.tap)" >&2
[ -d "$results/gcda" ] || die "no gcov data came back from the guest (see the runner's message above)"

set -- -build "$build" -src "$src" -gcda "$results/gcda"
[ -n "$patch" ] && set -- "$@" -diff "$patch"
[ "${COV_FUNCTIONS:-0}" = 1 ] && set -- "$@" -functions
"$tool" "$@" >"$results/coverage.txt"
"$tool" "$@" -functions -lines "$results/lines.json" >"$results/functions.txt"
cat "$results/coverage.txt"
echo "coverage: report in $results/coverage.txt, every function in $results/functions.txt, per-line counts in $results/lines.json" >&2
# The report stands either way; the exit status is the suite's, so a failing
# case is not hidden behind a coverage figure.
[ "$rc" = 0 ] || echo "coverage: the suite itself exited $rc (see $results/summary.txt)" >&2
exit "$rc"
