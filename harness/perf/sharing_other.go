//go:build !amd64

package perf

// The sharing profile's plugin knows x86-64 markers only: elsewhere they do
// nothing and Sharing refuses to run (markersSupported).
func shareStart0() {}
func shareStart1() {}
func shareStop0()  {}
func shareStop1()  {}
func shareJoin()   {}
func shareLeave()  {}
func shareLearn()  {}

const markersSupported = false
