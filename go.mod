module github.com/fsnsuite/fsnsuite

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/sys v0.50.0 // indirect
	gotest.tools/v3 v3.5.2 // indirect
)
