// Package sharing turns the sharing profile's records into figures per
// operation: which kernel-mode writes of a measured chunk went to 64-byte
// physical cache lines that more than one vCPU wrote.
//
// Two records meet here, both copied into a VM run's results directory:
//   - the qemu plugin's (scripts/vm/sharing/fsnshare.c; PluginFile): one
//     "window" line per window between the guest's start and stop markers,
//     with the window's kernel stores, distinct lines, writes to lines that
//     more than one vCPU wrote (shared writes), those lines, and ownership
//     transfers, and "hot" lines describing its most written shared lines;
//   - the perf engine's in the guest (ChunksFile, written by harness/perf in
//     the sharing profile): one "chunk" line per window it opened, in the same
//     order, naming the case, the condition, the block, the mode and the
//     operations the window held.
//
// Join pairs them one to one (the marker's tag must be the condition's),
// and Analyze gives each case's conditions the perf engine's statistics: per
// block the median window's figure per operation, the median over blocks
// with its distribution-free interval, and the paired ratio. The figures are
// counts of coherence-relevant writes, a lower bound on cross-CPU traffic,
// not time (harness/perf/README.md, "Sharing profile").
package sharing
