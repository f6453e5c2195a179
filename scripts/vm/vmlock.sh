# vmlock.sh — sourced (not run) by the scripts that boot a guest
# (vmcheck.sh, sharingcheck.sh, coverage.sh), so their VM runs take turns
# with each other and with `fsnsuite mutants` / `fsnsuite patchcheck` on
# FSNSUITE_VM_LOCK, as harness/vm's lock does for those: a wait of at most
# 3 hours; a symlink, or a file that is not a regular file this user owns,
# is refused (it may sit in a world-writable directory); the file is created
# 0600. Without FSNSUITE_VM_LOCK the command runs at once.
#
#   vm_lock_check NAME        refuse a bad lock file (prints NAME: why; exit 2)
#   vm_locked CMD [ARG...]    run CMD under the lock; status 75: still held
#   vm_lock_holders           the pids and commands holding it, one line

vm_lock_wait=10800

vm_lock_check() {
	[ -n "${FSNSUITE_VM_LOCK:-}" ] || return 0
	if [ -L "$FSNSUITE_VM_LOCK" ]; then
		echo "$1: FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK is a symlink: refusing to follow it" >&2
		exit 2
	fi
	if [ -e "$FSNSUITE_VM_LOCK" ] && { [ ! -f "$FSNSUITE_VM_LOCK" ] || [ ! -O "$FSNSUITE_VM_LOCK" ]; }; then
		echo "$1: FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK is not a regular file this user owns: refusing it" >&2
		exit 2
	fi
	command -v flock >/dev/null || { echo "$1: FSNSUITE_VM_LOCK is set but there is no flock(1): apt-get install util-linux" >&2; exit 2; }
	(umask 077 && : >>"$FSNSUITE_VM_LOCK") || { echo "$1: FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK: cannot create it" >&2; exit 2; }
}

vm_locked() {
	if [ -n "${FSNSUITE_VM_LOCK:-}" ]; then
		flock -w "$vm_lock_wait" -E 75 "$FSNSUITE_VM_LOCK" "$@"
	else
		"$@"
	fi
}

vm_lock_holders() {
	lslocks -n -o PID,COMMAND,PATH 2>/dev/null |
		awk -v p="$FSNSUITE_VM_LOCK" '$3 == p && !seen[$1]++ {printf "pid %s comm %s; ", $1, $2}'
}
