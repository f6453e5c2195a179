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
