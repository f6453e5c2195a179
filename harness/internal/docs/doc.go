// Package docs holds the checks that keep the repository's README files
// true: the top README is a first page (short, the two commands first), its
// links lead somewhere, and no README states a figure that changes with the
// code (a leaf or case count) in prose.
package docs
