// Package docgen writes the parts of the documentation that list what the
// registries hold, so that they cannot fall out of step with the code.
//
// A Markdown file marks each generated region with HTML comments, which
// Markdown renders invisibly:
//
//	<!-- kinds AXIS -->          the table of an axis: every kind with its
//	…                           parameters, defaults and description
//	<!-- end kinds -->           (registry.Markdown)
//
//	<!-- names AXIS -->…<!-- end names -->
//	                             the kinds of an axis as an inline list,
//	                             for prose
//
// Rewrite replaces every region with what the registries say now; the
// program tools/docgen (run by `go generate` in the module root) applies it
// to the files, and a test of the root package fails when a file differs
// from what Rewrite makes of it.
//
// It may import internal/registry only; the program that runs it links the
// plug-in packages.
package docgen
