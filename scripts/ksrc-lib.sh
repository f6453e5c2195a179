# ksrc-lib.sh — shell functions shared by the scripts that build a kernel
# from a source tree into the cache (scripts/coverage, scripts/mutants,
# scripts/patchcheck). Source it: . scripts/ksrc-lib.sh

# source_state KSRC: the state of a source tree, as cheaply as the tree
# allows, for a cache key: for a git tree HEAD plus `git diff HEAD` plus the
# untracked files under fs/ and include/; otherwise the path, size and mtime
# of every file.
source_state() {
	if git -C "$1" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
		[ "$(git -C "$1" rev-parse --show-toplevel)" = "$1" ]; then
		echo "git $(git -C "$1" rev-parse HEAD)"
		git -C "$1" diff HEAD
		git -C "$1" ls-files -o --exclude-standard -- fs include | while IFS= read -r f; do
			echo "untracked $f"
			cat "$1/$f"
		done
	else
		echo "tree $1"
		(cd "$1" && find . -path ./.git -prune -o -type f -printf '%P %s %T@\n' | LC_ALL=C sort)
	fi
}

# private_copy KSRC DEST WHO: a private copy of KSRC in DEST, without .git:
# hard links when DEST is on KSRC's filesystem (a file the caller changes
# must be replaced by a new file, never written through), else a real copy.
# WHO prefixes the message said when it has to copy.
private_copy() {
	if ! cp -al "$1/." "$2" 2>/dev/null; then
		rm -rf "$2"
		mkdir -p "$2"
		echo "$3: $1 is on another filesystem than $2: copying it" >&2
		tar -C "$1" --exclude=./.git -cf - . | tar -C "$2" -xf -
	fi
	rm -rf "$2/.git"
}

# clean_tree KSRC WHO: fail unless KSRC is a kernel tree without an in-tree
# build (an out-of-tree build, O=, needs a clean tree).
clean_tree() {
	if [ ! -f "$1/Makefile" ] || [ ! -d "$1/fs/notify" ]; then
		echo "$2: $1 is not a kernel source tree (no Makefile or fs/notify)" >&2
		return 1
	fi
	if [ -f "$1/.config" ] || [ -f "$1/include/config/auto.conf" ]; then
		echo "$2: $1 has an in-tree build (.config); an out-of-tree build needs a clean tree: run 'make mrproper' there or give a clean copy" >&2
		return 1
	fi
}

# patch_files PATCH: the files a patch touches (its "+++" and "---" names,
# one directory level stripped as patch -p1 does; /dev/null left out).
patch_files() {
	sed -n 's/^\(+++\|---\) \([^	 ]*\).*/\2/p' "$1" | grep -v '^/dev/null$' | sed 's|^[^/]*/||' | sort -u
}

# unlink_files DIR PATCH: replace each file of DIR the patch touches by a
# copy of itself, so that patching DIR never writes through a hard link.
unlink_files() {
	patch_files "$2" | while IFS= read -r f; do
		if [ -f "$1/$f" ]; then
			cp "$1/$f" "$1/$f.fsnsuite" && rm -f "$1/$f" && mv "$1/$f.fsnsuite" "$1/$f"
		fi
	done
}

# cache_key KSRC METHOD FRAGMENT...: the 16 hex digits a cached build of
# KSRC is kept under: sha256 of its source state, the build method's text,
# the config fragments and gcc's version.
cache_key() {
	_ksrc=$1 _method=$2
	shift 2
	{
		source_state "$_ksrc"
		echo "$_method"
		cat "$@"
		gcc --version | head -n 1
	} | sha256sum | cut -c1-16
}
