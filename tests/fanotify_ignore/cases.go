package main

import "github.com/fsnsuite/fsnsuite/harness"

var handCases []harness.Case
