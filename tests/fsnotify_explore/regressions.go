package main

// regression is a fixed scenario: a shrunk mismatch pasted from the
// explorer's output (its case row), or a hand-written interaction worth
// keeping whatever the seed range draws.
type regression struct {
	Name     string
	Doc      string
	Scenario Scenario
}

var regressions = []regression{}
