#!/bin/sh
# cache-dir.sh — print fsnsuite's cache directory, as scripts/fetch-debian-kernel.sh
# picks it: $FSNSUITE_CACHE, else <repo>/.cache when the repository is
# writable and its path has no space or colon (kbuild builds the kernels of
# make coverage, mutants and patchcheck in the cache, and refuses such a
# path), else ~/.cache/fsnsuite.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${FSNSUITE_CACHE:-}" ]; then
	echo "$FSNSUITE_CACHE"
elif [ -w "$repo" ] && case $repo in *[[:space:]:]*) false ;; esac; then
	echo "$repo/.cache"
else
	echo "${XDG_CACHE_HOME:-$HOME/.cache}/fsnsuite"
fi
