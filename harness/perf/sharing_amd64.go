package perf

// Markers of the sharing profile (sharing_amd64.s).
func shareStart0()
func shareStart1()
func shareStop0()
func shareStop1()
func shareJoin()
func shareLeave()
func shareLearn()

// markersSupported: this architecture has the markers the plugin knows.
const markersSupported = true
