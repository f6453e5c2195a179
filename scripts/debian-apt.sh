# debian-apt.sh — sourced (not run) by the scripts that download Debian
# packages the host's own apt sources may not carry: kernels
# (fetch-debian-kernel.sh) and kernel sources (coverage/fetch-kernel-source.sh).
#
# It keeps a private apt configuration under $aptdir (its own sources list,
# package lists, archive directory; dpkg status /dev/null), carrying
# bullseye, bookworm, trixie-backports and sid, so the host's apt sources
# are never read or changed. FSNSUITE_DEBIAN_MIRROR and
# FSNSUITE_DEBIAN_SECURITY set the archive URLs (default deb.debian.org).
#
# The caller sets aptdir and defines die(); then:
#   apt_private CMD ARGS...   run an apt command with the private configuration
#   apt_update                refresh the private lists (once per run)
#   apt_ready                 set up and fill the lists if they were never filled

debian_mirror=${FSNSUITE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
debian_security=${FSNSUITE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}

apt_setup() {
	mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" "$aptdir/parts" "$aptdir/prefs"
	cat >"$aptdir/sources.list.new" <<EOS
deb $debian_mirror bullseye main
deb $debian_security bullseye-security main
deb $debian_mirror bookworm main
deb $debian_mirror bookworm-updates main
deb $debian_security bookworm-security main
deb $debian_mirror bookworm-backports main
deb $debian_mirror trixie-backports main
deb $debian_mirror sid main
EOS
	mv "$aptdir/sources.list.new" "$aptdir/sources.list"
	cat >"$aptdir/apt.conf.new" <<EOS
Dir::Etc::SourceList "$aptdir/sources.list";
Dir::Etc::SourceParts "$aptdir/parts";
Dir::Etc::Preferences "$aptdir/prefs/none";
Dir::Etc::PreferencesParts "$aptdir/prefs";
Dir::State::Lists "$aptdir/lists";
Dir::State::status "/dev/null";
Dir::Cache "$aptdir/cache";
Dir::Cache::Archives "$aptdir/archives";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
Acquire::IndexTargets::deb::DEP-11::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled "false";
Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled "false";
EOS
	mv "$aptdir/apt.conf.new" "$aptdir/apt.conf"
}

apt_private() { APT_CONFIG=$aptdir/apt.conf "$@"; }

apt_updated=no
apt_update() {
	[ "$apt_updated" = yes ] && return 0
	apt_setup
	echo "fetching the private package lists ($aptdir)" >&2
	apt_private apt-get update -q >"$aptdir/update.log" 2>&1 ||
		die "apt-get update failed (private configuration $aptdir/apt.conf; see $aptdir/update.log)"
	apt_updated=yes
}

apt_ready() {
	if [ ! -f "$aptdir/apt.conf" ] || [ -z "$(ls "$aptdir/lists" 2>/dev/null | grep -v partial)" ]; then
		apt_update
	fi
}
