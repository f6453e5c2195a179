# Sourced by scripts/vm/deps.sh and scripts/coverage/deps.sh: the common tail
# of a POSIX-sh dependency script. apt_need WHO PKGS installs the Debian
# packages PKGS (a space-separated list; empty: nothing to do) as root, trying
# without `apt-get update` first; WHO names the script in its messages. Not
# root and something missing: it says what and exits 1.
apt_need() {
	who=$1
	need=$2
	[ -z "$need" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "$who: missing packages:$need (run as root or install them)" >&2
		exit 1
	fi
	echo "$who: installing$need" >&2
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	if ! apt-get install -y --no-install-recommends $need >/dev/null; then
		apt-get update >/dev/null
		# shellcheck disable=SC2086
		apt-get install -y --no-install-recommends $need >/dev/null
	fi
}
