#!/bin/sh
# patchcheck.sh KSRC PATCH [-- fsnsuite patchcheck flags [-- runner flags]]
# — what `make patchcheck` runs: from a kernel source tree and a patch to a
# verdict.
#
# KSRC is a kernel tree, or a Debian source package by name
# (linux-source-7.3: fetched into the cache by
# scripts/coverage/fetch-kernel-source.sh through the private apt
# configuration). PATCH is a patch file (patch -p1), or, when KSRC is a git
# tree, a range A..B: the base is commit A (exported into the cache) and the
# patch is `git diff A B`.
#
# Steps: build the base and the patched kernel (build-kernels.sh: one build
# directory, the patched build incremental, both cached), then `fsnsuite
# patchcheck`: correctness on both, leaf by leaf; the explorer recorded on
# the base and replayed on the patched kernel; the perf binaries on both
# (instruction counts without KVM); summary.txt, summary.json, report.html in
# PC_RESULTS (default results/patchcheck/<patch name>).
# JOBS (2) and NICE (19) set make's -j and niceness. PC_STEPS (make's
# STEPS: coverage,correctness,explore,cost; default all) says what runs.
#
# Exit status, the verdict (also written to PC_RESULTS/exit_status as "N
# words"): 0 no difference, 1 behaviour changed, 2 broken (a step could not
# run, a usage error); a patch that does not apply: 3 from build-kernels.sh.
# CI reads this status: `make patchcheck` cannot pass it on (make exits only
# 0 or 2 for a recipe's status; mk/patchcheck.mk).
set -eu

started=$(date +%s) # the summary's wall time counts from here
top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "patchcheck: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: $0 KSRC|linux-source-X.Y PATCH|A..B [-- fsnsuite patchcheck flags]"
ksrc=$1
patch=$2
shift 2
[ "${1:-}" = "--" ] && shift

# PC_STEPS (make patchcheck STEPS=correctness,explore): what to run, one
# variable for the coverage step (PC_COVERAGE, which an explicit value
# still overrides) and fsnsuite patchcheck's -steps (a -steps in the flags
# after it still wins).
if [ -n "${PC_STEPS:-}" ]; then
	. "$top/scripts/patchcheck/pc-lib.sh"
	steps=$(steps_of "$PC_STEPS") || exit 2
	[ -n "${PC_COVERAGE:-}" ] || PC_COVERAGE=${steps%% *}
	set -- -steps "${steps#* }" "$@"
fi

sh "$top/scripts/vm/deps.sh"
sh "$top/scripts/coverage/deps.sh"
. "$top/scripts/apt-need.sh"
command -v patch >/dev/null 2>&1 && need="" || need=patch
apt_need scripts/patchcheck/patchcheck.sh "$need"

case $ksrc in
linux-source-[0-9]*) ksrc=$(sh "$top/scripts/coverage/fetch-kernel-source.sh" "$ksrc") ;;
esac
ksrc=$(cd "$ksrc" && pwd) || die "KSRC $ksrc: no such directory"
cache=$(sh "$top/scripts/coverage/cache-dir.sh")

if [ ! -f "$patch" ]; then
	case $patch in
	*..*) ;;
	*) die "$patch: no such patch file (and not a git range A..B)" ;;
	esac
	git -C "$ksrc" rev-parse --git-dir >/dev/null 2>&1 || die "$patch: a range needs KSRC to be a git tree ($ksrc is not)"
	from=$(git -C "$ksrc" rev-parse --verify "${patch%%..*}^{commit}") || die "$patch: no commit ${patch%%..*}"
	to=$(git -C "$ksrc" rev-parse --verify "${patch##*..}^{commit}") || die "$patch: no commit ${patch##*..}"
	tree=$cache/patchcheck-trees/$from
	if [ ! -f "$tree/.done" ]; then
		echo "patchcheck: exporting $from into $tree" >&2
		rm -rf "$tree"
		mkdir -p "$tree"
		git -C "$ksrc" archive "$from" | tar -C "$tree" -xf -
		touch "$tree/.done"
	fi
	mkdir -p "$cache/patchcheck-patches"
	name=$(echo "$from" | cut -c1-12)..$(echo "$to" | cut -c1-12)
	git -C "$ksrc" diff --no-color --no-ext-diff "$from" "$to" >"$cache/patchcheck-patches/$name.patch"
	patch=$cache/patchcheck-patches/$name.patch
	ksrc=$tree
fi
patch=$(cd "$(dirname "$patch")" && pwd)/$(basename "$patch")

kernels=$(JOBS=${JOBS:-2} NICE=${NICE:-19} sh "$top/scripts/patchcheck/build-kernels.sh" "$ksrc" "$patch")
base=$(echo "$kernels" | sed -n 's/^base //p')
patched=$(echo "$kernels" | sed -n 's/^patched //p')
lockwait=$(echo "$kernels" | sed -n 's/^build_lock_wait //p')
out=${PC_RESULTS:-$top/results/patchcheck/$(basename "$patch" .patch)}
mkdir -p "$out"
# -cache: the base kernel's runs are kept there and reused when the base
# kernel, the suite build, the step's flags, qemu, the accelerator and the
# guest's userland are the same (PATCHCHECK_ARGS=-no-base-cache runs them
# again).
set -- -base "$base" -patched "$patched" -patch "$patch" -out "$out" -started "$started" -build-lock-wait "${lockwait:-0}" -cache "$cache" "$@"

# The changed lines: a gcov kernel of the patched tree (make coverage's
# build, cached by that tree's state) and the suite on it; PC_COVERAGE=0
# leaves this step out.
if [ "${PC_COVERAGE:-1}" = 1 ]; then
	. "$top/scripts/ksrc-lib.sh"
	tree=$(dirname "$base")/tree-$(basename "$patched" | sed 's/^patched-//')
	# Under the build lock (build-kernels.sh's): two patchchecks of one
	# patch must not make the tree at once.
	(
		flock -w "${PC_BUILD_LOCK_WAIT:-21600}" 9 || { echo "patchcheck: gave up waiting for the build lock $(dirname "$base")/build.lock" >&2; exit 2; }
		if [ ! -f "$tree/.applied" ]; then
			echo "patchcheck: the patched tree for the coverage build: $tree" >&2
			rm -rf "$tree"
			mkdir -p "$tree"
			private_copy "$ksrc" "$tree" patchcheck
			unlink_files "$tree" "$patch"
			if grep -q '^@@ ' "$patch"; then
				patch -p1 --batch --forward --silent -d "$tree" <"$patch" >&2
			fi
			touch "$tree/.applied"
		fi
	) 9>>"$(dirname "$base")/build.lock"
	start=$(date +%s)
	rc=0
	COV_RESULTS=$out/coverage COV_DIFF=$patch \
		sh "$top/scripts/coverage/coverage.sh" "$tree" -no-perf >"$out/coverage.txt" || rc=$?
	echo "patchcheck: coverage step: exit $rc in $(( $(date +%s) - start ))s ($out/coverage.txt)" >&2
	set -- -coverage "$out/coverage.txt" "$@"
fi
echo "patchcheck: $top/bin/fsnsuite patchcheck $*" >&2
rc=0
"$top/bin/fsnsuite" patchcheck "$@" || rc=$?
# The verdict's status, for make patchcheck (whose own exit status can
# only be 0 or 2) and for whoever reads the results later.
case $rc in
0) what="no difference" ;;
1) what="behaviour changed" ;;
*) what="broken: the patchcheck could not decide" ;;
esac
printf '%s %s\n' "$rc" "$what" >"$out/exit_status"
exit "$rc"
