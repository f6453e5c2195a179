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
# a panic before /init), FSNSUITE_VM_LOCK (a file flock'ed around each VM
# run: scripts/vm/vmlock.sh). The runner is bin/fsnsuite (build it with make).
# Runner flags given after KERNEL (e.g. -strict, -run REGEX, -j=1) are passed on.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 KERNEL [fsnsuite args...]" >&2; exit 2; }
spec=$1
shift

kernel=""
modules=${MODULES:-}
case $spec in
debian-* | linux-image-* | linux-binary-*)
	vars=$("$top/scripts/fetch-debian-kernel.sh" "$spec")
	kernel=$(printf '%s\n' "$vars" | sed -n 's/^KERNEL=//p')
	[ -n "$modules" ] || modules=$(printf '%s\n' "$vars" | sed -n 's/^MODULES=//p')
	;;
*)
	kernel=$spec
	[ -e "$kernel" ] || { echo "vmcheck: KERNEL=$spec: no such file; a Debian kernel is named debian-X.Y, debian-X.Y.Z, linux-image-... or linux-binary-... (scripts/fetch-debian-kernel.sh)" >&2; exit 2; }
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

. "$top/scripts/vm/vmlock.sh"
vm_lock_check vmcheck

# run_suite runs the runner (under FSNSUITE_VM_LOCK, if set) with its stderr
# both shown and kept in $errlog (stdout stays the TAP stream), and sets rc
# to its exit status; a lock still held after 3 hours ends the run.
mkdir -p "$(dirname "$results")"
errlog=$results.stderr
rcfile=$results.rc
run_suite() {
	{ {
		st=0
		vm_locked "$top/bin/fsnsuite" "$@" 2>&1 1>&3 3>&- || st=$?
		echo "$st" >"$rcfile"
	} | tee "$errlog" >&2; } 3>&1
	rc=$(cat "$rcfile")
	rm -f "$rcfile"
	if [ "$rc" = 75 ] && [ -n "${FSNSUITE_VM_LOCK:-}" ]; then
		echo "vmcheck: the VM lock $FSNSUITE_VM_LOCK was held for more than 3 hours by: $(vm_lock_holders)" >&2
		exit 2
	fi
}

# panicked_in_boot: the runner says the guest kernel panicked during boot,
# before /init reported in (so no case ran), and the report it printed names
# no part of fsnotify (a boot-time fsnotify crash is a result, not bad luck).
panicked_in_boot() {
	grep -q 'fsnsuite: vm: kernel panic during boot' "$errlog" &&
		! grep '^vm:   | ' "$errlog" | grep -qiE 'fsnotify|inotify|fanotify|dnotify'
}

echo "vmcheck: $top/bin/fsnsuite $*" >&2
start=$(date +%s)
rm -f "$results.boot1-console.log"
second=""
run_suite "$@"
# A kernel that panics while it boots under emulation, before any case ran,
# is booted once more (a lab retries a boot failure the same way), so a rare
# emulation fault does not stand for a verdict. Both reports are printed; a
# panic on the second boot, any panic once the guest's /init ran, or one
# whose report names fsnotify, is the result.
if [ "$rc" != 0 ] && [ -z "${VMCHECK_NO_REBOOT:-}" ] && panicked_in_boot; then
	echo "vmcheck: kernel $spec panicked during boot, before any case ran; its console log is kept as $results.boot1-console.log; booting once more" >&2
	cp "$results/vm-console.log" "$results.boot1-console.log" 2>/dev/null || true
	rm -rf "$results"
	second=" (second boot: the first panicked during boot)"
	run_suite "$@"
fi
rm -f "$errlog"
end=$(date +%s)
skips=0
if [ -f "$results/results.tap" ]; then
	skips=$(grep -c '# SKIP' "$results/results.tap" || true)
fi
echo "vmcheck: kernel $spec: exit $rc$second, wall time $((end - start))s, $skips skip lines (results in $results)" >&2
if [ "$skips" != 0 ]; then
	grep '# SKIP' "$results/results.tap" | sed 's/^ */vmcheck:   /' >&2
fi
exit $rc
