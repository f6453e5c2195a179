# pc-lib.sh — shell functions of build-kernels.sh, sourced (and tested by
# harness/patchcheck/scripts_test.go).

# patch_localversion KVER PATCH — the CONFIG_LOCALVERSION of PATCH's kernel:
# "-fsnp-" + the patch file's name without .patch/.diff, every character
# outside [A-Za-z0-9._-] made "_", + "-" + the first 8 hex digits of the
# patch's sha256, so that two patched kernels never report the same release
# (the hash tells apart two patches of one name). The name is cut so that
# the release (KVER, e.g. 7.3.4, then this, then one more character that
# scripts/setlocalversion may add: "+" for a git tree off its tag) fits the
# kernel's 64-character UTS release (__NEW_UTS_LEN, include/uapi/linux/utsname.h).
patch_localversion() {
	_kver=$1
	_sum=$(sha256sum <"$2" | cut -c1-8)
	_name=$(basename "$2")
	_name=${_name%.patch}
	_name=${_name%.diff}
	_name=$(printf '%s' "$_name" | LC_ALL=C tr -c 'A-Za-z0-9._-' '_')
	# 64 - KVER - "-fsnp-" - "-" - 8 hex - 1 spare
	_room=$((64 - ${#_kver} - 6 - 1 - 8 - 1))
	[ "$_room" -ge 0 ] || _room=0
	_name=$(printf '%s' "$_name" | cut -c1-"$_room")
	if [ -n "$_name" ]; then
		printf -- '-fsnp-%s-%s\n' "$_name" "$_sum"
	else
		printf -- '-fsnp-%s\n' "$_sum"
	fi
}

# kernel_version MAKEFILE — VERSION.PATCHLEVEL.SUBLEVEL plus EXTRAVERSION
# as a kernel tree's top Makefile sets them (read, not run: nothing is
# written into the tree).
kernel_version() {
	sed -n 's/^\(VERSION\|PATCHLEVEL\|SUBLEVEL\|EXTRAVERSION\) *= *\(.*\)$/\1=\2/p' "$1" | awk -F= '
		{ v[$1] = $2 }
		END {
			if (v["VERSION"] == "" || v["PATCHLEVEL"] == "") exit 1
			s = v["VERSION"] "." v["PATCHLEVEL"]
			if (v["SUBLEVEL"] != "") s = s "." v["SUBLEVEL"]
			print s v["EXTRAVERSION"]
		}'
}

# steps_of STEPS — the make variable STEPS (comma-separated: coverage,
# correctness, explore, cost) as two words: 1 or 0 for the coverage step
# (patchcheck.sh's), then the -steps of fsnsuite patchcheck
# ("correctness,explore"). An unknown step, or none of fsnsuite
# patchcheck's, is an error naming the valid ones.
steps_of() {
	_cov=0
	_rest=
	for _s in $(printf '%s' "$1" | tr ',' ' '); do
		case $_s in
		coverage) _cov=1 ;;
		correctness | explore | cost) _rest=${_rest:+$_rest,}$_s ;;
		*)
			echo "STEPS=$1: unknown step '$_s' (want coverage, correctness, explore, cost, comma-separated)" >&2
			return 2
			;;
		esac
	done
	if [ -z "$_rest" ]; then
		echo "STEPS=$1: name at least one of correctness, explore, cost (coverage alone gives no verdict: make coverage COV_DIFF=... does that)" >&2
		return 2
	fi
	echo "$_cov $_rest"
}
