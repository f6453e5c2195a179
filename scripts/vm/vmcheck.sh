#!/bin/sh
# vmcheck.sh KERNEL [runner args...] — run the correctness suite inside qemu on
# KERNEL and report the wall time. KERNEL is debian-5.10, debian-6.1,
# debian-X.Y (e.g. debian-6.12, debian-7.3; fetched and cached by
# scripts/fetch-debian-kernel.sh through its own apt configuration), an exact
# linux-image package name, or the path of a kernel image (with MODULES=DIR
# for its module tree).
#
# Environment: MODULES, VM_CPUS, VM_MEM, VM_TIMEOUT, VM_RESULTS (results dir,
# default results/vm-<kernel>), VMCHECK_NO_REBOOT (set: no second boot after
# a panic before /init). The runner is bin/fsnsuite (build it with make).
# Runner flags given after KERNEL (e.g. -strict, -run REGEX, -j=1) are passed on.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 KERNEL [fsnsuite args...]" >&2; exit 2; }
spec=$1
shift

kernel=""
modules=${MODULES:-}
case $spec in
debian-* | linux-image-*)
	vars=$("$top/scripts/fetch-debian-kernel.sh" "$spec")
	kernel=$(printf '%s\n' "$vars" | sed -n 's/^KERNEL=//p')
	[ -n "$modules" ] || modules=$(printf '%s\n' "$vars" | sed -n 's/^MODULES=//p')
	;;
*)
	kernel=$spec
	;;
esac

name=$(basename "$spec")
results=${VM_RESULTS:-$top/results/vm-$name}
rm -rf "$results"

# Correctness binaries in parallel, one per guest CPU (TCG runs a thread per
# vCPU); a -j in the given arguments comes later and wins.
set -- -kernel "$kernel" -results "$results" -j="${VM_CPUS:-2}" "$@"
[ -n "$modules" ] && set -- "$@" -modules "$modules"
[ -n "${VM_CPUS:-}" ] && set -- "$@" -vm-cpus "$VM_CPUS"
[ -n "${VM_MEM:-}" ] && set -- "$@" -vm-mem "$VM_MEM"
[ -n "${VM_TIMEOUT:-}" ] && set -- "$@" -vm-timeout "$VM_TIMEOUT"

# panicked_before_init: the guest kernel panicked before it ran /init, so no
# case ran (the console log has the panic and no "Run /init").
panicked_before_init() {
	log=$results/vm-console.log
	[ -f "$log" ] && grep -q 'Kernel panic - not syncing' "$log" && ! grep -q 'Run /init as init process' "$log"
}

echo "vmcheck: $top/bin/fsnsuite $*" >&2
start=$(date +%s)
rc=0
"$top/bin/fsnsuite" "$@" || rc=$?
# A kernel that panics while it boots under emulation, before any case ran,
# is booted once more (a lab retries a boot failure the same way), so a rare
# emulation fault does not stand for a verdict. Both panics are printed; a
# panic on the second boot, or any panic once the suite ran, is the result.
if [ "$rc" != 0 ] && [ -z "${VMCHECK_NO_REBOOT:-}" ] && panicked_before_init; then
	echo "vmcheck: kernel $spec panicked before /init ran (no case ran); its console log is kept as $results.boot1-console.log; booting once more" >&2
	cp "$results/vm-console.log" "$results.boot1-console.log"
	rm -rf "$results"
	rc=0
	"$top/bin/fsnsuite" "$@" || rc=$?
fi
end=$(date +%s)
skips=0
if [ -f "$results/results.tap" ]; then
	skips=$(grep -c '# SKIP' "$results/results.tap" || true)
fi
echo "vmcheck: kernel $spec: exit $rc, wall time $((end - start))s, $skips skip lines (results in $results)" >&2
if [ "$skips" != 0 ]; then
	grep '# SKIP' "$results/results.tap" | sed 's/^ */vmcheck:   /' >&2
fi
exit $rc
