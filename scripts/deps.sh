#!/usr/bin/env bash
# Installs what the native suite needs on a Debian-like machine: mkfs.ext4 and
# debugfs (e2fsprogs) for the loop-ext4 fixture and the FAN_FS_ERROR cases,
# mkfs.xfs (xfsprogs) and mkfs.btrfs (btrfs-progs) for the xfs and btrfs
# fixtures, python3-junitparser for the JUnit test. Idempotent and quick when present.
# With --report it also installs Debian's chromium, for the HTML report's test
# in a headless browser (harness/runner/htmlreport: TestReportInChromium).
# The VM runner's own packages are installed by scripts/vm/deps.sh.
set -euo pipefail
need=()
if [ "${1:-}" = --report ]; then
	command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/sbin/$1" ] || [ -x "/usr/sbin/$1" ]; }
have mkfs.ext4 && have debugfs || need+=(e2fsprogs)
have mkfs.xfs || need+=(xfsprogs)
have mkfs.btrfs || need+=(btrfs-progs)
# The JUnit report's test reads it back with Debian's junitparser.
[ -d /usr/lib/python3/dist-packages/junitparser ] || need+=(python3-junitparser)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: need ${need[*]} (run as root to install)" >&2
		exit 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
command -v go >/dev/null 2>&1 || { echo "deps: go not found on PATH (need Go >= 1.26)" >&2; exit 1; }
