package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/run"
)

// Every registered topology, link process, failure and fault runs a few
// rounds in its example scenario (or named in a small run) on both drivers,
// with byte-identical metrics. The kinds come from the registries, so a new
// one is run here without editing this test.
func TestEveryNetworkPluginRuns(t *testing.T) {
	for _, a := range registry.Axes() {
		switch a.Name() {
		case "network", "links", "failures", "faults":
		default:
			continue
		}
		for _, kind := range a.Kinds() {
			t.Run(a.Name()+"/"+kind, func(t *testing.T) {
				sc, src, err := plugintest.Scenario(a, kind)
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				var ref []byte
				for _, driver := range []string{"sequential", "actors"} {
					sc.Runtime.Driver = driver
					dir := t.TempDir()
					if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir}); err != nil {
						t.Fatalf("%s: %v\n%s", driver, err, src)
					}
					m, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					if len(m) == 0 {
						t.Fatalf("%s: no metrics", driver)
					}
					if ref == nil {
						ref = m
					} else if !bytes.Equal(m, ref) {
						t.Errorf("metrics.jsonl differs between the drivers\n%s", src)
					}
				}
			})
		}
	}
}
