#!/bin/sh
# fsnsuite guest /init (harness/vm). Runs under busybox sh as PID 1:
# mounts the pseudo filesystems, checks the kernel for what the suite needs,
# loads modules, runs the runner with its stdout on ttyS1 and stderr on ttyS2,
# reports "FSNSUITE-VM exit CODE" and the results directory on ttyS1, and
# reboots (qemu runs with -no-reboot, so that ends the VM).
# With gcov=1 in run.conf (Config.GcovDir, make coverage) it snapshots every
# .gcda file of /sys/kernel/debug/gcov just before the runner starts (boot/),
# has the runner copy them after each binary (bin/NN-name, one binary at a
# time: FSNSUITE_GCOV_SNAPSHOTS)
# and after it exits (suite/; the counters run on, so suite minus boot is what
# the suite ran), and sends both as one gcov block on ttyS1:
#   FSNSUITE-VM gcov-begin FILES BYTES
#   <base64 of a tar.gz of boot/... and suite/..., paths below them relative
#    to /sys/kernel/debug/gcov>
#   FSNSUITE-VM gcov-end
# or "FSNSUITE-VM gcov-none REASON" (before the runner) when the kernel has none.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
umask 022

mount -t proc proc /proc
mount -t sysfs sysfs /sys
missing=""
if ! mount -t devtmpfs devtmpfs /dev; then
	missing="$missing DEVTMPFS"
	# Make the nodes needed to say so.
	mknod /dev/console c 5 1
	mknod /dev/null c 1 3
	mknod /dev/ttyS1 c 4 65
	mknod /dev/ttyS2 c 4 66
fi
exec </dev/null >/dev/console 2>&1

out=/dev/ttyS1
errport=/dev/ttyS2
stty -F $out raw -echo 2>/dev/null
stty -F $errport raw -echo 2>/dev/null
say() { echo "FSNSUITE-VM $*" >$out; }
finish() {
	sync
	reboot -f
	poweroff -f
	sleep 5
}

say init "$(uname -r)" "$(nproc 2>/dev/null)"

mount -t tmpfs -o mode=1777 tmpfs /tmp || missing="$missing TMPFS"
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null

# Which kernel options are there? /proc/config.gz when built in, else traces
# of the feature in /proc.
cfg=""
if [ -r /proc/config.gz ]; then
	cfg=$(zcat /proc/config.gz 2>/dev/null)
fi
has_opt() {
	echo "$cfg" | grep -q "^CONFIG_$1=[ym]"
}
ksym() {
	grep -q -E " (__x64_sys_|__ia32_sys_|sys_)?$1\$" /proc/kallsyms 2>/dev/null
}
if [ -n "$cfg" ]; then
	say config /proc/config.gz
	for o in FANOTIFY INOTIFY_USER; do
		has_opt $o || missing="$missing $o"
	done
	lacks=""
	for o in FANOTIFY_ACCESS_PERMISSIONS FHANDLE; do
		has_opt $o || lacks="$lacks $o"
	done
	# Only worth saying when the run goes on.
	[ -n "$lacks" ] && [ -z "$missing" ] && say lacks $lacks
else
	if [ ! -d /proc/sys/fs/fanotify ] && ! ksym fanotify_init; then
		if [ -s /proc/kallsyms ] || [ -d /proc/sys/fs/inotify ]; then
			missing="$missing FANOTIFY"
		fi
	fi
	if [ ! -d /proc/sys/fs/inotify ] && ! ksym inotify_init1; then
		if [ -s /proc/kallsyms ]; then
			missing="$missing INOTIFY_USER"
		fi
	fi
fi
if [ -n "$missing" ]; then
	say missing $missing
	finish
fi

# Under TCG the CRNG may never be seeded by itself and every mkfs would wait
# on it; one blocking read here is enough.
dd if=/dev/random of=/dev/null bs=1 count=1 2>/dev/null
say rng

if [ -f /etc/fsnsuite/modules ]; then
	while read -r m; do
		insmod "$m" >/dev/console 2>&1 || say modfail "$m"
	done </etc/fsnsuite/modules
fi

mkdir -p /results
gcov=0
housekeeping=
. /etc/fsnsuite/run.conf
# The sharing profile: this shell and so every process it starts (the
# runner, the pipes' cat) run on the housekeeping vCPU (run.conf's mask);
# the perf engine pins its threads to the measured ones. The kernel's
# nohz_full set goes to the results for the host's report.
if [ -n "$housekeeping" ]; then
	if ! taskset -p "$housekeeping" $$ >/dev/null 2>&1; then
		say housekeeping-failed "taskset -p $housekeeping $$"
		finish
	fi
	mkdir -p /results
	echo "housekeeping=$housekeeping nohz_full=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null) online=$(cat /sys/devices/system/cpu/online 2>/dev/null)" >/results/sharing-isolation.txt
	say housekeeping "$housekeeping nohz_full=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)"
fi
gcovdir=/sys/kernel/debug/gcov
gcov_files=0
# gcov_snapshot DIR: copy every .gcda file. debugfs reports a size of 0 for
# them, so they are read with cat, never handed to tar directly.
gcov_snapshot() {
	for f in $(cd $gcovdir && find . -name '*.gcda'); do
		mkdir -p "$1/${f%/*}"
		cat "$gcovdir/$f" >"$1/$f" && gcov_files=$((gcov_files + 1))
	done
}
if [ "$gcov" = 1 ]; then
	mkdir -p /sys/kernel/debug
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	if [ ! -e $gcovdir/reset ]; then
		say gcov-none "no $gcovdir: the kernel lacks CONFIG_GCOV_KERNEL (or CONFIG_DEBUG_FS)"
		finish
	fi
	gcov_snapshot /tmp/gcov.out/boot
	# The runner copies the counters after each binary too (bin/NN-name),
	# running one binary at a time: which binaries ran a line.
	mkdir -p /tmp/gcov.out/bin
	export FSNSUITE_GCOV_SNAPSHOTS=/tmp/gcov.out/bin
fi
# The clock the perf engine reads (jiffies would be too coarse to time a
# chunk; under -icount the TSC counts instructions).
say clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
say start
cd /tmp
export FSNSUITE_IN_VM=1 FSNSUITE_RESULTS_DIR=/results
# stderr goes through a pipe so the runner does not take ttyS2 for a terminal.
rc=1
{
	"$runner" "$@" >$out
	echo $? >/run/fsnsuite.rc
} 2>&1 | cat >$errport
read -r rc </run/fsnsuite.rc
say exit $rc
if [ "$gcov" = 1 ]; then
	gcov_snapshot /tmp/gcov.out/suite
	gcov_files=$(find /tmp/gcov.out -type f | wc -l)
	tar -C /tmp/gcov.out -cf - . | gzip -c >/tmp/gcov.tgz
	say gcov-begin $gcov_files $(wc -c </tmp/gcov.tgz)
	base64 </tmp/gcov.tgz >$out
	say gcov-end
fi
if [ -n "$(ls -A /results 2>/dev/null)" ]; then
	say results-begin
	tar -C /results -cf - . | gzip -c | base64 >$out
	say results-end
fi
say done
finish
