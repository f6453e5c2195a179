# The sharing profile's qemu plugin (scripts/vm/sharing, harness/perf README
# "Sharing profile"): `make sharing-plugin` fetches the plugin API header from
# Debian's qemu source package of the host's qemu version (private apt
# configuration, once), builds fsnshare.so under .cache/qemu-plugin/ (reused
# while its sources are unchanged) and prints its path for -vm-sharing.
.PHONY: sharing-plugin
sharing-plugin:
	@sh scripts/vm/sharing/build.sh
