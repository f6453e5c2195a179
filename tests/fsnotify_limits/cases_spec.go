package main

import "github.com/fsnsuite/fsnsuite/harness"

// specCases check rules of the man pages no earlier case checked; each
// names its rule ids in spec.go.
var specCases = []harness.Case{{
	Name: "spec_close_frees_watches",
	Doc:  "with max_inotify_watches = 3 a user adds 3 watches (one per instance), the 4th is ENOSPC, and closing the first instance frees its watch's slot (inotify(7) DESCRIPTION)",
	Run:  func(t *harness.T) { checkLimit(t, "inotify_watches_close") },
}}
