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
# Only Debian's archive keys are trusted: every source is Signed-By
# FSNSUITE_DEBIAN_KEYRING (default /usr/share/keyrings/debian-archive-keyring.gpg,
# package debian-archive-keyring, which scripts/vm/deps.sh and
# scripts/coverage/deps.sh install), and the host's trusted.gpg and
# trusted.gpg.d are not read (Dir::Etc::Trusted and TrustedParts point into
# $aptdir, where there are none), so a key the host trusts for another
# repository cannot sign Debian's lists here.
#
# The caller sets aptdir and defines die(); then:
#   apt_private CMD ARGS...   run an apt command with the private configuration
#   apt_update                refresh the private lists (once per run)
#   apt_ready                 set up and fill the lists if they were never filled
#
# apt_deb_src, when set before apt_setup, lists suites (e.g. "bookworm
# bookworm-updates") whose source indexes are added as deb-src lines, for
# `apt-get source`; keep such a configuration in an aptdir of its own (the
# sharing profile's header fetch uses <cache>/apt-src), so the binary-only
# one is not fetched anew.

debian_mirror=${FSNSUITE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
debian_security=${FSNSUITE_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
debian_keyring=${FSNSUITE_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

apt_setup() {
	[ -f "$debian_keyring" ] ||
		die "no Debian archive keyring $debian_keyring (install debian-archive-keyring: sh scripts/vm/deps.sh)"
	case $debian_keyring in
	/*[[:space:]]* | *\]*) die "FSNSUITE_DEBIAN_KEYRING=$debian_keyring: a path with a space or ']' cannot be a Signed-By option" ;;
	/*) ;;
	*) die "FSNSUITE_DEBIAN_KEYRING=$debian_keyring: want an absolute path" ;;
	esac
	mkdir -p "$aptdir/lists/partial" "$aptdir/archives/partial" "$aptdir/parts" "$aptdir/prefs" "$aptdir/trusted.gpg.d"
	s="[signed-by=$debian_keyring]"
	cat >"$aptdir/sources.list.new" <<EOS
deb $s $debian_mirror bullseye main
deb $s $debian_security bullseye-security main
deb $s $debian_mirror bookworm main
deb $s $debian_mirror bookworm-updates main
deb $s $debian_security bookworm-security main
deb $s $debian_mirror bookworm-backports main
deb $s $debian_mirror trixie-backports main
deb $s $debian_mirror sid main
EOS
	for suite in ${apt_deb_src:-}; do
		case $suite in
		*-security) echo "deb-src $s $debian_security $suite main" ;;
		*) echo "deb-src $s $debian_mirror $suite main" ;;
		esac
	done >>"$aptdir/sources.list.new"
	cat >"$aptdir/apt.conf.new" <<EOS
Dir::Etc::SourceList "$aptdir/sources.list";
Dir::Etc::SourceParts "$aptdir/parts";
Dir::Etc::Trusted "$aptdir/trusted.gpg";
Dir::Etc::TrustedParts "$aptdir/trusted.gpg.d";
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
Acquire::AllowInsecureRepositories "false";
Acquire::AllowDowngradeToInsecureRepositories "false";
APT::Get::AllowUnauthenticated "false";
EOS
	# A configuration that changed (one written before the keyring was
	# pinned) had its lists verified under other rules: they are fetched
	# anew (apt_update clears the mark).
	for f in sources.list apt.conf; do
		cmp -s "$aptdir/$f.new" "$aptdir/$f" || apt_changed=yes
		mv "$aptdir/$f.new" "$aptdir/$f"
	done
}

apt_private() { APT_CONFIG=$aptdir/apt.conf "$@"; }

apt_updated=no
apt_changed=no
apt_update() {
	[ "$apt_updated" = yes ] && return 0
	apt_setup
	if [ "$apt_changed" = yes ]; then
		rm -rf "$aptdir/lists"
		mkdir -p "$aptdir/lists/partial"
		apt_changed=no
	fi
	echo "fetching the private package lists ($aptdir)" >&2
	apt_private apt-get update -q >"$aptdir/update.log" 2>&1 ||
		die "apt-get update failed (private configuration $aptdir/apt.conf; see $aptdir/update.log)"
	apt_updated=yes
}

# apt_ready writes the configuration and fetches the lists when they were
# never fetched, or were fetched under another configuration.
apt_ready() {
	apt_setup
	if [ "$apt_changed" = yes ] || [ -z "$(ls "$aptdir/lists" 2>/dev/null | grep -v partial)" ]; then
		apt_update
	fi
}
