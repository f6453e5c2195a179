#!/bin/sh
# runltp.sh: run the fsnsuite tests the way LTP's runltp is run: build bin/ if
# needed, then hand every argument to bin/fsnsuite, with GNU-style spellings
# (--kernel X, --kernel=X, --no-perf) turned into its Go flags (-kernel X, ...).
set -eu

top=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
runner=$top/bin/fsnsuite

usage() {
	cat <<EOF
usage: $0 [options]

Builds the suite if bin/fsnsuite is missing, then runs it (root needed for
most cases). Options are those of bin/fsnsuite, with one or two dashes:

  -f FILE           run the binaries of an LTP runtest file (e.g. runtest/fsnsuite)
  -run REGEX        run only binaries whose name matches
  -case REGEX       run only matching cases inside each binary
  -no-perf          leave out the perf_* binaries
  -j N              run N correctness binaries at once (perf ones always run alone)
  -timeout DUR      per-binary limit (default 300s)
  -format tap13|ktap, -strict, -exit kselftest|ltp, -v
  -results DIR      results directory (default ./results/<timestamp>)
  -kernel IMAGE     boot IMAGE in qemu and run the suite inside it
                    (-modules DIR, -vm-mem SIZE, -vm-cpus N, -vm-timeout DUR)
  -h                this help; bin/fsnsuite -h lists every flag

Exit status: 0 pass, 1 failure, 4 all skipped (-exit ltp: 0/1/2/32).
EOF
}

# Translate the arguments in place: "--name" -> "-name", keep values as they are.
n=$#
i=0
while [ "$i" -lt "$n" ]; do
	a=$1
	shift
	case $a in
	-h | --help | -help)
		usage
		exit 0
		;;
	--) ;;
	--*) a=${a#-} ;;
	esac
	set -- "$@" "$a"
	i=$((i + 1))
done

if [ ! -x "$runner" ]; then
	echo "runltp.sh: $runner missing; building with make" >&2
	make -C "$top" >&2
fi
exec "$runner" "$@"
