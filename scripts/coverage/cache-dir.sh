#!/bin/sh
# cache-dir.sh — print fsnsuite's cache directory, as scripts/fetch-debian-kernel.sh
# picks it: $FSNSUITE_CACHE, else <repo>/.cache when the repository is
# writable, else ~/.cache/fsnsuite.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${FSNSUITE_CACHE:-}" ]; then
	echo "$FSNSUITE_CACHE"
elif [ -w "$repo" ]; then
	echo "$repo/.cache"
else
	echo "${XDG_CACHE_HOME:-$HOME/.cache}/fsnsuite"
fi
