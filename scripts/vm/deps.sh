#!/bin/sh
# Installs the host tools the VM runner needs: qemu (x86_64 system emulator),
# a static busybox for the guest, cpio to pack the initramfs, kmod (depmod) for
# module trees, e2fsprogs (mke2fs is copied into the guest), xz/zstd to unpack
# compressed kernel modules. Idempotent: does nothing when all are present.
set -eu

need=""
have() { command -v "$1" >/dev/null 2>&1; }
have qemu-system-x86_64 || need="$need qemu-system-x86"
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need="$need busybox-static"
have cpio || need="$need cpio"
have depmod || need="$need kmod"
have mke2fs || [ -x /sbin/mke2fs ] || need="$need e2fsprogs"
have xz || need="$need xz-utils"
have zstd || need="$need zstd"

if [ -z "$need" ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "scripts/vm/deps.sh: missing packages:$need (run as root or install them)" >&2
	exit 1
fi
echo "scripts/vm/deps.sh: installing$need" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! apt-get install -y --no-install-recommends $need >/dev/null; then
	apt-get update >/dev/null
	# shellcheck disable=SC2086
	apt-get install -y --no-install-recommends $need >/dev/null
fi
