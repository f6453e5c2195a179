package main

import "github.com/fsnsuite/fsnsuite/harness"

// fidUsable returns nil when a FAN_REPORT_FID group can mark this case's
// filesystem, or the reason it cannot: the filesystem's own probe
// (feature.FIDOn through T.FID: ENODEV when it has no fsid, EOPNOTSUPP/EXDEV
// when it cannot encode file handles; fanotify_test_fsid, fanotify_test_fid),
// a skip-class error below the release that gave the filesystem file
// handles and a failure at or above it.
func fidUsable(t *harness.T) error { return t.FID().Check() }
