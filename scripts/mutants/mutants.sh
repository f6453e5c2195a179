#!/bin/sh
# mutants.sh [KSRC] [-- runner flags] — what `make mutants` runs: build (or
# reuse) the kernel to mutate from KSRC (scripts/mutants/build-kernel.sh),
# then `fsnsuite mutants`: the unmutated kernel's run of the correctness suite
# under qemu (the baseline), then each mutant of a seeded sample of fs/notify
# (dnotify left out), one at a time: applied to the private source copy,
# built incrementally, run, compared leaf by leaf, reverted.
#
# KSRC defaults to Debian's linux-source-6.1 (fetched into .cache/ksrc).
# Environment: N (sample size, 15; 0: every mutant), SEED (1), ID (comma-
# separated mutant ids instead of a sample), BASE (git KSRC: only lines
# changed since BASE), EXPECT (exit 1 unless each mutant run has this
# outcome), MUT_RESULTS (results/mutants), COV_LINES (results/coverage/lines.json:
# mutants on lines that never ran are not run), EQUIVALENT
# (scripts/mutants/equivalent.txt), VM_CPUS (2), VM_MEM, MUT_VM_TIMEOUT (per
# mutant; default twice the baseline's run plus 3 min), FSNSUITE_VM_LOCK (a
# file flock'ed around each VM run), RESUME (1: keep the verdicts an
# interrupted run of the same selection left in MUT_RESULTS and run only the
# rest; force: also when its builds or inputs differ), FIRST_KILL (1: stop each mutant's run at the first leaf that kills
# it), JOBS/NICE for make.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "mutants: $*" >&2; exit 2; }

ksrc=${1:-}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
sh "$top/scripts/vm/deps.sh"
sh "$top/scripts/coverage/deps.sh"
if [ -z "$ksrc" ]; then
	ksrc=$(sh "$top/scripts/coverage/fetch-kernel-source.sh")
fi
ksrc=$(cd "$ksrc" && pwd) || die "KSRC $ksrc: no such directory"

dir=$(JOBS=${JOBS:-2} NICE=${NICE:-19} sh "$top/scripts/mutants/build-kernel.sh" "$ksrc")

set -- -ksrc "$ksrc" -dir "$dir" -results "${MUT_RESULTS:-$top/results/mutants}" \
	-n "${N:-15}" -seed "${SEED:-1}" -jobs "${JOBS:-2}" -nice "${NICE:-19}" \
	-vm-cpus "${VM_CPUS:-2}" -coverage "${COV_LINES:-$top/results/coverage/lines.json}" \
	-equivalent "${EQUIVALENT:-$top/scripts/mutants/equivalent.txt}" -- "$@"
[ -n "${VM_MEM:-}" ] && set -- -vm-mem "$VM_MEM" "$@"
[ -n "${MUT_VM_TIMEOUT:-}" ] && set -- -vm-timeout "$MUT_VM_TIMEOUT" "$@"
[ -n "${ID:-}" ] && set -- -id "$ID" "$@"
[ -n "${BASE:-}" ] && set -- -base "$BASE" "$@"
[ -n "${EXPECT:-}" ] && set -- -expect "$EXPECT" "$@"
[ -n "${SHARD:-}" ] && set -- -shard "$SHARD" "$@"
[ -n "${FILES:-}" ] && set -- -files "$FILES" "$@"
[ -n "${RESUME:-}" ] && [ "$RESUME" != 0 ] && set -- -resume "$@"
[ "${RESUME:-}" = force ] && set -- -resume-force "$@"
[ -n "${FIRST_KILL:-}" ] && [ "$FIRST_KILL" != 0 ] && set -- -first-kill "$@"
echo "mutants: $top/bin/fsnsuite mutants $*" >&2
exec "$top/bin/fsnsuite" mutants "$@"
