#!/bin/sh
# Installs what `make coverage` needs besides scripts/vm/deps.sh: a kernel
# build toolchain (gcc and its gcov, make, flex, bison, bc, libelf-dev,
# libssl-dev, libc6-dev), xz for the source package and git for BASE=.
# Idempotent: does nothing when all are present.
set -eu

need=""
have() { command -v "$1" >/dev/null 2>&1; }
pkg_ok() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
have gcc || need="$need gcc"
have gcov || need="$need gcc"
have make || need="$need make"
have flex || need="$need flex"
have bison || need="$need bison"
have bc || need="$need bc"
have xz || need="$need xz-utils"
have git || need="$need git"
pkg_ok libelf-dev || need="$need libelf-dev"
pkg_ok libssl-dev || need="$need libssl-dev"
pkg_ok libc6-dev || need="$need libc6-dev"
# Debian's archive keys, for the private apt configuration that fetches
# the kernel source (scripts/debian-apt.sh).
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || need="$need debian-archive-keyring"

. "$(dirname "$0")/../apt-need.sh"
apt_need scripts/coverage/deps.sh "$need"
