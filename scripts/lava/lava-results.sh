#!/bin/sh
# lava-results.sh RESULTS_DIR [EXIT_STATUS]: report a run of fsnsuite to LAVA.
#
# EXIT_STATUS (the runner's) becomes the case fsnsuite.run: pass when the run
# ended and reported (0 all passed, 1 a failure, 4 or 32 all skipped: the
# verdicts are the cases below), fail for anything else (2: a usage or
# environment error, results it could not write whole, or LTP's broken; a
# signal; a runner that did not start), with the status as its measurement.
#
# RESULTS_DIR/lava.txt (written by the runner: one "NAME RESULT
# [MEASUREMENT UNITS]" line per leaf and per perf figure, then "# count
# pass=N fail=M skip=K total=T") becomes one lava-test-case call per line.
# Names are stable dotted paths with no reason in them; the reasons are in
# the TAP log that fsnsuite printed. A results file that is missing, cut
# short (no count line, a last line without its newline), malformed, or whose
# count line disagrees with the lines read, is the failed case fsnsuite.runner
# naming the problem: fewer lines are never read as fewer failures.
set -u
set -f # a line's words are split, never globbed
res=${1-}
status=${2-}

# problem WHY: the results file cannot be trusted as complete (said each
# time, reported to LAVA once).
reported=''
problem() {
	echo "lava-results.sh: $1" >&2
	if [ -z "$reported" ]; then
		reported=yes
		lava-test-case fsnsuite.runner --result fail
	fi
}

if [ $# -ge 2 ]; then
	case $status in
	0 | 1 | 4 | 32)
		lava-test-case fsnsuite.run --result pass --measurement "$status" --units exit_status
		;;
	'' | *[!0-9]*)
		echo "lava-results.sh: fsnsuite did not run (${status:-no exit status})" >&2
		lava-test-case fsnsuite.run --result fail
		;;
	*)
		echo "lava-results.sh: fsnsuite exited with status $status (not a finished run: see its last lines on stderr above)" >&2
		lava-test-case fsnsuite.run --result fail --measurement "$status" --units exit_status
		;;
	esac
fi

if [ -z "$res" ]; then
	problem "no results directory (mktemp -d failed?)"
	exit 0
fi
file=$res/lava.txt
if [ -L "$file" ] || [ ! -f "$file" ] || [ ! -s "$file" ]; then
	problem "no results in $file"
	exit 0
fi

pass=0 fail=0 skip=0 total=0 count='' after=''
n=0
while :; do
	if ! IFS= read -r line; then
		if [ -n "$line" ]; then
			problem "$file is cut short: its last line has no newline: $line"
		fi
		break
	fi
	n=$((n + 1))
	if [ -n "$count" ]; then
		after="line $n comes after the count line"
	fi
	case $line in
	'# count '*)
		count=$line
		continue
		;;
	'#'*)
		continue
		;;
	esac
	# shellcheck disable=SC2086 # split into its words, on purpose
	set -- $line
	if [ $# -ne 2 ] && [ $# -ne 4 ]; then
		problem "$file line $n is not NAME RESULT [MEASUREMENT UNITS]: $line"
		continue
	fi
	case $2 in
	pass) pass=$((pass + 1)) ;;
	fail) fail=$((fail + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	unknown) ;;
	*)
		problem "$file line $n has result '$2' (want pass, fail, skip or unknown): $line"
		continue
		;;
	esac
	total=$((total + 1))
	if [ $# -eq 4 ]; then
		lava-test-case "$1" --result "$2" --measurement "$3" --units "$4"
	else
		lava-test-case "$1" --result "$2"
	fi
done <"$file"

want="# count pass=$pass fail=$fail skip=$skip total=$total"
if [ -z "$count" ]; then
	problem "$file has no count line after its $total result lines: it was cut short (a full disk?), so the run's results are incomplete"
elif [ "$count" != "$want" ]; then
	problem "$file says '$count' but $total lines were read ('$want'): the results file is not whole"
elif [ -n "$after" ]; then
	problem "$file: $after"
fi
exit 0
