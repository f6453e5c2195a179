package runner

// ReasonGroup is the leaves that share a reason (a skip's reason, a
// failure's statement), as the run's summary groups its skips.
type ReasonGroup struct {
	Reason string
	Paths  []string
}

// GroupByReason groups leaves (paths[i] with reasons[i]) the way the run's
// summary groups its skips (skipGroups): reasons that differ only in a
// call's arguments or a quoted string are one, the largest group first.
func GroupByReason(paths, reasons []string) []ReasonGroup {
	entries := make([]summaryEntry, len(paths))
	for i, p := range paths {
		entries[i] = summaryEntry{path: p, text: reasons[i]}
	}
	var out []ReasonGroup
	for _, g := range skipGroups(entries) {
		out = append(out, ReasonGroup{Reason: g.reason, Paths: g.paths})
	}
	return out
}
