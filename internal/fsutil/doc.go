// Package fsutil writes output files so that a reader (or a crash) never
// sees half of one.
//
// It imports the standard library only.
package fsutil
