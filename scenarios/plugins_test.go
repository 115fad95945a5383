package scenarios_test

import (
	"bytes"
	"testing"

	_ "hgpsim/experiments" // every registered experiment
	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/scenarios"
)

// Every registered kind of every axis decodes, validates and passes the
// pre-run checks (the network built and its assumptions checked) in its
// example scenario or, without one, named in a small run with everything
// else at its defaults; the scenario selects the kind; and its resolved form
// survives a round trip. The kinds come from the registries, so a new
// plug-in is covered here without editing this test.
func TestEveryPluginValidates(t *testing.T) {
	for _, a := range registry.Axes() {
		for _, kind := range a.Kinds() {
			t.Run(a.Name()+"/"+kind, func(t *testing.T) {
				sc, src, err := plugintest.Scenario(a, kind)
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				if !plugintest.Selects(sc, a, kind) || plugintest.Selects(sc, a, "no-such-kind") {
					t.Fatalf("the scenario does not select %s %s:\n%s", a.Name(), kind, src)
				}
				if _, err := scenarios.Check("check", sc, scenarios.CheckOptions{MaxMemory: -1}); err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				out, err := scenarios.Marshal(sc)
				if err != nil {
					t.Fatal(err)
				}
				back, err := scenarios.Parse("resolved.yaml", out)
				if err != nil {
					t.Fatalf("the resolved scenario does not parse back: %v\n%s", err, out)
				}
				if out2, err := scenarios.Marshal(back); err != nil || !bytes.Equal(out, out2) {
					t.Fatalf("the resolved scenario changed on a round trip (%v):\n%s\n---\n%s", err, out, out2)
				}
			})
		}
	}
}
