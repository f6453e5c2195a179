#!/bin/sh
# lava-results.sh RESULTS_DIR: turn fsnsuite's results file (RESULTS_DIR/lava.txt,
# one "NAME RESULT [MEASUREMENT UNITS]" line per leaf and per perf figure) into
# lava-test-case calls. Names are stable dotted paths with no reason in them;
# the reasons are in the TAP log that fsnsuite printed. A run that left no
# results file is reported as the one failed case fsnsuite.runner.
set -u
res=${1:?usage: lava-results.sh RESULTS_DIR}
if [ ! -s "$res/lava.txt" ]; then
	echo "lava-results.sh: no results in $res/lava.txt" >&2
	lava-test-case fsnsuite.runner --result fail
	exit 0
fi
while read -r name result measurement units; do
	if [ -n "$measurement" ]; then
		lava-test-case "$name" --result "$result" --measurement "$measurement" --units "$units"
	else
		lava-test-case "$name" --result "$result"
	fi
done <"$res/lava.txt"
