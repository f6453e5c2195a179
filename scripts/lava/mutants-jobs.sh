#!/bin/sh
# mutants-jobs.sh N OUTDIR [VAR=VALUE...]: write N LAVA job definitions
# (OUTDIR/mutants-shard-K-of-N.yaml, K = 1..N) from mutants-job.yaml, one per
# part SHARD=K/N of the mutant list, to submit with
#   for f in OUTDIR/*.yaml; do lavacli jobs submit "$f"; done
# VAR=VALUE fills the template's @VAR@ placeholders: DEVICE_TYPE, KERNEL_URL,
# ROOTFS_URL, BOOT_METHOD, REPOSITORY, REVISION (pin one commit: shards of
# different suite builds are refused by the merge), FILES, UPLOAD. Every
# placeholder must be given; a job with one left is not written.
set -eu
usage() { echo "usage: $0 N OUTDIR [VAR=VALUE...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
n=$1
out=$2
shift 2
case $n in '' | *[!0-9]* | 0) usage ;; esac
here=$(dirname "$0")
mkdir -p "$out"
k=1
while [ "$k" -le "$n" ]; do
	job=$(sed -e "s|@SHARD@|$k/$n|g" -e "s|@K@|$k|g" "$here/mutants-job.yaml")
	for kv in "$@"; do
		var=${kv%%=*}
		val=${kv#*=}
		case $var in '' | *[!A-Z_]*) echo "$0: $kv: not VAR=VALUE" >&2; exit 2 ;; esac
		job=$(printf '%s\n' "$job" | VAL=$val awk -v key="@$var@" '{ while ((i = index($0, key)) > 0) $0 = substr($0, 1, i - 1) ENVIRON["VAL"] substr($0, i + length(key)); print }')
	done
	left=$(printf '%s\n' "$job" | grep -v '^#' | grep -o '@[A-Z_]*@' | sort -u | tr '\n' ' ' || true)
	if [ -n "$left" ]; then
		echo "$0: placeholders not given: $left" >&2
		exit 2
	fi
	printf '%s\n' "$job" >"$out/mutants-shard-$k-of-$n.yaml"
	k=$((k + 1))
done
echo "$0: $n jobs in $out" >&2
