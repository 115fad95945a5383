package main

import (
	"os"
	"slices"
	"testing"

	"hgpsim/internal/docgen"
	"hgpsim/internal/registry"
)

// The generated regions of README.md and docs/*.md (the kind tables of
// docs/scenarios.md, the kind lists of the prose) are what the registries
// of the plug-ins this binary links say now, and docs/scenarios.md has a
// table for every axis. Regenerate with `go generate .`.
func TestDocsAreGenerated(t *testing.T) {
	files, err := docgen.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, axes, err := docgen.Rewrite(string(b), registry.Axes())
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want != string(b) {
			t.Errorf("%s differs from what the registries say; run `%s` in the module root", f, docgen.Command)
		}
		if f == "docs/scenarios.md" {
			tables = axes
		}
	}
	for _, a := range registry.Axes() {
		if !slices.Contains(tables, a.Name()) {
			t.Errorf("docs/scenarios.md has no table of the %s kinds; add <!-- kinds %s -->\\n<!-- end kinds --> where they belong and run `%s`", a.Name(), a.Name(), docgen.Command)
		}
	}
}

// Every registered plug-in has a description and documents each parameter.
func TestPluginsAreDocumented(t *testing.T) {
	if err := registry.Check(); err != nil {
		t.Fatal(err)
	}
}
