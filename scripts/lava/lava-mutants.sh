#!/bin/sh
# lava-mutants.sh RESULTS_DIR STATUS: report one shard of make mutants to
# LAVA: the case mutants.run (pass when the shard ran and wrote its report),
# then one case per mutant of report.txt's "Mutants:" list. A killed or
# crashed/hung mutant is a pass (the suite caught the fault), a survivor a
# fail, every other outcome (build-failed, not covered, equivalent, same
# code) a skip. A missing report is the failed case mutants.run.
set -u
set -f
res=${1-}
status=${2-}
report="$res/report.txt"
if [ "$status" != 0 ] || [ ! -f "$report" ]; then
	echo "lava-mutants.sh: make mutants exited ${status:-?}; report ${report}: $( [ -f "$report" ] && echo present || echo missing)" >&2
	lava-test-case mutants.run --result fail --measurement "${status:-0}" --units status
	[ -f "$report" ] || exit 0
else
	lava-test-case mutants.run --result pass
fi
# Mutant lines (harness/mutate's report): two spaces, a 10-hex id, the
# outcome (one word), then file:line.
sed -n 's/^  \([0-9a-f]\{10\}\) \([a-z-]*\)  *[^ ]*:[0-9].*/\1 \2/p' "$report" | while read -r id outcome; do
	case $outcome in
	killed | crashed) result=pass ;;
	survived) result=fail ;;
	*) result=skip ;;
	esac
	lava-test-case "mutants.$id" --result "$result"
done
