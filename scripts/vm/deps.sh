#!/bin/sh
# Installs the host tools the VM runner needs: qemu (x86_64 system emulator),
# a static busybox for the guest, cpio to pack the initramfs, kmod (depmod) for
# module trees, e2fsprogs (mke2fs is copied into the guest), xz/zstd to unpack
# compressed kernel modules, debian-archive-keyring for the private apt
# configuration, gcc for the sharing profile's qemu plugin. Idempotent: does nothing when all are present.
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
# Debian's archive keys: the private apt configuration that fetches kernels
# (scripts/debian-apt.sh) trusts these and nothing else.
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need="$need debian-archive-keyring"
# gcc builds the sharing profile's qemu plugin (scripts/vm/sharing/build.sh;
# its API header, qemu 7.2's, needs no glib).
have gcc || need="$need gcc"

. "$(dirname "$0")/../apt-need.sh"
apt_need scripts/vm/deps.sh "$need"
