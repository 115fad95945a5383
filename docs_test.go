package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"hgpsim/internal/registry"
)

// docs/scenarios.md carries, for every plug-in axis, the table `hgpsim list
// AXIS --markdown` prints: a registered kind missing from the docs, a kind
// documented but not registered, or a parameter or default out of step
// fails this test. Regenerate with `./hgpsim list AXIS --markdown`.
func TestScenarioDocsListEveryPlugin(t *testing.T) {
	b, err := os.ReadFile("docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`<!-- kinds (\S+) -->`).FindAllStringSubmatch(doc, -1) {
		documented[m[1]] = true
	}
	for _, a := range registry.Axes() {
		want := registry.Markdown(a)
		if !strings.Contains(doc, want) {
			t.Errorf("docs/scenarios.md lacks the current table of %s; replace the block between <!-- kinds %s --> and <!-- end kinds --> with the output of `hgpsim list %s --markdown`", a.Name(), a.Name(), a.Name())
		}
		delete(documented, a.Name())
	}
	for axis := range documented {
		t.Errorf("docs/scenarios.md documents an axis %q that is not registered", axis)
	}
}

// Every registered plug-in has a description and documents each parameter.
func TestPluginsAreDocumented(t *testing.T) {
	if err := registry.Check(); err != nil {
		t.Fatal(err)
	}
}
