# vmlock.sh — sourced (not run) by the scripts that boot a guest
# (vmcheck.sh, sharingcheck.sh, coverage.sh), so their VM runs take turns
# with each other and with `fsnsuite mutants` / `fsnsuite patchcheck` on
# FSNSUITE_VM_LOCK, as harness/vm's lock does for those: a wait of at most
# 3 hours; the file is created 0600; a symlink, or an open file that is not
# a regular file this user owns with one link, is refused (it may sit in a
# world-writable directory: the checks are made on the descriptor flock
# locks, so a file swapped in after them is never locked). Without
# FSNSUITE_VM_LOCK the command runs at once.
#
#   vm_lock_check NAME        refuse an unusable lock setting (NAME: why; exit 2)
#   vm_locked CMD [ARG...]    run the program CMD under the lock (status 75:
#                             still held after the wait; 2: a refused file)
#   vm_lock_holders           the pids and commands holding it, one line

vm_lock_wait=10800

vm_lock_check() {
	[ -n "${FSNSUITE_VM_LOCK:-}" ] || return 0
	command -v flock >/dev/null || { echo "$1: FSNSUITE_VM_LOCK is set but there is no flock(1): apt-get install util-linux" >&2; exit 2; }
	if [ -L "$FSNSUITE_VM_LOCK" ]; then
		echo "$1: FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK is a symlink: refusing to follow it" >&2
		exit 2
	fi
}

vm_locked() {
	if [ -z "${FSNSUITE_VM_LOCK:-}" ]; then
		"$@"
		return
	fi
	(
		[ ! -L "$FSNSUITE_VM_LOCK" ] || { echo "FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK is a symlink: refusing to follow it" >&2; exit 2; }
		umask 077
		# Read-write (created if missing) does not block, even on a FIFO.
		exec 9<>"$FSNSUITE_VM_LOCK" || exit 2
		what=$(stat -L -c '%F %u %h' /proc/self/fd/9) || exit 2
		case $what in
		"regular file $(id -u) 1" | "regular empty file $(id -u) 1") ;;
		*)
			echo "FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK is not a regular file this user owns with one link ($what): refusing it" >&2
			exit 2
			;;
		esac
		# The path must still name that file: a symlink swapped in before
		# the open (and away again) leaves another inode behind it.
		[ "$(stat -c '%d:%i' "$FSNSUITE_VM_LOCK")" = "$(stat -L -c '%d:%i' /proc/self/fd/9)" ] || {
			echo "FSNSUITE_VM_LOCK $FSNSUITE_VM_LOCK changed while it was opened: refusing it" >&2
			exit 2
		}
		flock -w "$vm_lock_wait" -E 75 9 || exit $?
		"$@"
	)
}

vm_lock_holders() {
	lslocks -n -o PID,COMMAND,PATH 2>/dev/null |
		awk -v p="$FSNSUITE_VM_LOCK" '$3 == p && !seen[$1]++ {printf "pid %s comm %s; ", $1, $2}'
}
