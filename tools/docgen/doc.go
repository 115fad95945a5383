// Command docgen rewrites the generated regions of README.md and docs/*.md
// (package internal/docgen) from the registries of every plug-in hgpsim
// links. The root package runs it with `go generate .`; it takes the module
// root as its only argument (default: the working directory).
//
// It may import experiments, scenarios and internal packages: it links every
// plug-in to document it.
package main
