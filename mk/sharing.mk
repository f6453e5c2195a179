# The sharing profile's qemu plugin (scripts/vm/sharing, harness/perf README
# "Sharing profile"): `make sharing-plugin` fetches the plugin API header from
# Debian's qemu source package of the host's qemu version (private apt
# configuration, once), builds fsnshare.so under .cache/qemu-plugin/ (reused
# while its sources are unchanged) and prints its path for -vm-sharing.
.PHONY: sharing-plugin
sharing-plugin:
	@sh scripts/vm/sharing/build.sh

# make sharingcheck [KERNEL=debian-7.3]: the profile end to end on one kernel,
# perf_parent_write's control gated and under -aa (scripts/vm/sharing/sharingcheck.sh).
.PHONY: sharingcheck
sharingcheck: vmdeps build
	@sh scripts/vm/sharing/sharingcheck.sh $(if $(filter command line environment,$(origin KERNEL)),$(call q,$(KERNEL)),debian-7.3)
