#!/bin/sh
# sharingcheck.sh [KERNEL [runtest lines...]] — the sharing profile end to
# end: build the plugin (build.sh), fetch KERNEL (default debian-7.3, as
# vmcheck.sh does), boot it under qemu with -vm-sharing on 2 measured vCPUs
# (and vCPU 0 for the rest of the guest) and run
# perf_parent_write's control, samefile_private_n2, once gated and once
# with -aa (-budget 2s each). Exit 1 when the host's verdicts fail: the
# control must see >= 1 remote write per write to one shared file and <= 0.1
# for files of their own, and -aa must give the same figures on both sides
# (harness/sharing). Results in results/sharing-<kernel>/ (sharing.txt).
# 47-60 s on 2 cores without KVM (2026-12-05, Debian's 7.3, 2 measured vCPUs
# and vCPU 0, boot included).
#
# Environment: VM_CPUS (measured vCPUs, 2), VM_RESULTS, FSNSUITE_VM_LOCK (the
# VM lock), FSNSUITE_SHARING_PCS (1: the plugin's per-instruction diagnostic
# in the results' sharing-pcs.txt, harness/perf/README.md "Finding what
# differs").
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
spec=${1:-debian-7.3}
[ $# -gt 0 ] && shift
case $spec in
debian-* | linux-image-* | linux-binary-*)
	kernel=$("$top/scripts/fetch-debian-kernel.sh" "$spec" | sed -n 's/^KERNEL=//p')
	;;
*) kernel=$spec ;;
esac
[ -e "$kernel" ] || { echo "sharingcheck: no kernel image for $spec" >&2; exit 2; }
plugin=$(sh "$top/scripts/vm/sharing/build.sh")
results=${VM_RESULTS:-$top/results/sharing-$(basename "$spec")}
rm -rf "$results" "$results.runtest"
mkdir -p "$(dirname "$results")"
if [ $# -gt 0 ]; then
	printf '%s\n' "$@" >"$results.runtest"
else
	cat >"$results.runtest" <<'EOR'
control perf_parent_write -run ^samefile_private_n2$ -budget 2s
control_aa perf_parent_write -run ^samefile_private_n2$ -aa -budget 2s
EOR
fi
. "$top/scripts/vm/vmlock.sh"
vm_lock_check sharingcheck
start=$(date +%s)
rc=0
vm_locked "$top/bin/fsnsuite" -kernel "$kernel" -vm-sharing "$plugin" -vm-cpus "${VM_CPUS:-2}" \
	-f "$results.runtest" -results "$results" || rc=$?
if [ "$rc" = 75 ] && [ -n "${FSNSUITE_VM_LOCK:-}" ]; then
	echo "sharingcheck: the VM lock $FSNSUITE_VM_LOCK was held for more than 3 hours by: $(vm_lock_holders)" >&2
	exit 2
fi
echo "sharingcheck: $(( $(date +%s) - start )) s of wall time, exit $rc; report in $results/sharing.txt" >&2
exit $rc
