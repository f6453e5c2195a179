// Package hostile holds `make hostile`: an integration test (build tag
// hostile) that runs the built binaries under hostile conditions (non-root, a
// user namespace, seccomp filters, lowered limits, timeouts, signals, a case
// process stopped or frozen mid-case, two suites at once, root's limits nearly used by another program, bad flags and
// results directories) and asserts no hang, no
// leftover, no false pass, true skip reasons and conventional exit codes. See
// hostile_test.go; seccompexec is its seccomp helper.
package hostile
