// Package perf is fsnsuite's performance engine: it measures conditions side by side
// in one process and gates on their ratio with a confidence interval, never on an
// absolute time.
//
// An Experiment has a base and a measured condition. They run interleaved in blocks
// A B B A / B A A B (the order alternates from block to block, so a linear drift
// cancels inside every block), after warm-up blocks, with the measuring goroutine
// locked to its OS thread, that thread bound to one CPU and helpers (listeners) bound
// to another, and the garbage collector off. Each block yields one paired ratio
// cond/base; the ratio is the median of those with a distribution-free order-statistic
// interval (MedianCI). The engine adds blocks until the interval decides the gate
// (inside the threshold: pass; outside: fail) or the profile's time budget runs out
// (undecided: a skip naming the interval, a failure under -strict). It looks at most
// MaxLooks times, each look at the confidence that bounds the error over all looks
// (Looks). Every experiment has a Verify, run before the first block and after the
// last: a condition that did not hold (mark gone, events lost) fails the case
// whatever the ratio. An ungated ratio is printed with ReportedMarker, so that CI
// counts it apart from gated passes.
//
// -aa measures the base condition against itself (the engine must find no
// difference), -inject P% against a copy that does P% extra work, sized in the
// measured loop itself (the engine must find it). -save writes every sample and the environment as JSON
// and as Go benchmark lines for benchstat; -baseline compares with saved results
// (the change of medians with a distribution-free interval and a Mann-Whitney U
// p-value, a pre-registered threshold, a variability gate and, with two baselines,
// a drift check) and prints a before/after table.
package perf
