package run

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"hgpsim/datasets"
	"hgpsim/internal/plugintest"
	"hgpsim/scenarios"
)

// sameDataset reports how a and b differ, bit for bit ("" when they do
// not).
func sameDataset(a, b *datasets.Dataset) string {
	switch {
	case a == nil || b == nil:
		if a != b {
			return fmt.Sprintf("one is nil: %v, %v", a == nil, b == nil)
		}
		return ""
	case a.N != b.N || a.D != b.D || a.C != b.C:
		return fmt.Sprintf("shape %d×%d (%d classes) against %d×%d (%d)", a.N, a.D, a.C, b.N, b.D, b.C)
	case !slices.Equal(a.Y, b.Y):
		return "labels differ"
	case !slices.Equal(a.Codes, b.Codes):
		return "codes differ"
	case (a.Levels == nil) != (b.Levels == nil):
		return "one is coded, the other not"
	case len(a.X) != len(b.X):
		return "feature lengths differ"
	}
	for k := range a.X {
		if math.Float64bits(a.X[k]) != math.Float64bits(b.X[k]) {
			return fmt.Sprintf("feature %d: %v against %v", k, a.X[k], b.X[k])
		}
	}
	if a.Levels != nil {
		for k := range a.Levels {
			if math.Float64bits(a.Levels[k]) != math.Float64bits(b.Levels[k]) {
				return fmt.Sprintf("level %d: %v against %v", k, a.Levels[k], b.Levels[k])
			}
		}
	}
	return ""
}

// sameClientData reports how a and b differ ("" when they do not).
func sameClientData(a, b datasets.ClientData) string {
	for _, p := range []struct {
		name string
		a, b *datasets.Dataset
	}{{"train", a.Train, b.Train}, {"val", a.Val, b.Val}, {"test", a.Test, b.Test}} {
		if d := sameDataset(p.a, p.b); d != "" {
			return p.name + ": " + d
		}
	}
	if !slices.Equal(a.Noisy, b.Noisy) {
		return "noisy marks differ"
	}
	return ""
}

// withFashionFiles points a source whose IDX files are missing (mnist and
// emnist have no standard folder) at links to the Fashion-MNIST files
// under the names it expects, when it has a Dir field; the images are
// then Fashion-MNIST's, which is all a test of the partition needs.
func withFashionFiles(t *testing.T, src datasets.Source) bool {
	t.Helper()
	m, ok := src.(interface{ Missing() []string })
	if !ok || len(m.Missing()) == 0 {
		return true
	}
	if len(datasets.FashionMNIST("").Missing()) > 0 {
		return false
	}
	dir := reflect.ValueOf(src).Elem().FieldByName("Dir")
	if !dir.IsValid() || dir.Kind() != reflect.String {
		return false
	}
	tmp := t.TempDir()
	dir.SetString(tmp)
	fashion := datasets.FashionMNIST("")
	for _, f := range src.Files() {
		base := filepath.Base(f)
		var from string
		switch {
		case strings.Contains(base, "train") && strings.Contains(base, "images"):
			from = fashion.Train
		case strings.Contains(base, "train") && strings.Contains(base, "labels"):
			from = fashion.TrainLabels
		case strings.Contains(base, "images"):
			from = fashion.Test
		default:
			from = fashion.TestLabels
		}
		if err := os.Symlink(filepath.Join(fashion.Dir, from), filepath.Join(tmp, base)); err != nil {
			t.Fatal(err)
		}
	}
	return len(m.Missing()) == 0
}

// Every registered data source builds any block of nodes with the same
// bits as the full load: a worker that hosts the block trains on the data
// the in-process run would. The kinds come from the registry, so a new
// source is checked here without editing this test (one without
// LoadBlock passes through datasets.LoadBlock's full load).
func TestEverySourceLoadsBlocks(t *testing.T) {
	for _, kind := range datasets.Sources.Kinds() {
		t.Run(kind, func(t *testing.T) {
			sc, text, err := plugintest.Scenario(datasets.Sources, kind)
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			src := sc.Data.Source.Params
			if !withFashionFiles(t, src) {
				t.Skipf("the data files of %s are missing: %v", kind, src.Files())
			}
			n := sc.Nodes()
			full, err := src.Load(n, sc.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(full) != n {
				t.Fatalf("Load built %d nodes, want %d", len(full), n)
			}
			blocks := [][2]int{{0, 1}, {1, n - 1}, {n - 1, n}, {n / 2, n / 2}}
			for _, b := range blocks {
				got, err := datasets.LoadBlock(src, n, sc.Seed, b[0], b[1])
				if err != nil {
					t.Fatalf("block %v: %v", b, err)
				}
				if len(got) != b[1]-b[0] {
					t.Fatalf("block %v: %d nodes' data", b, len(got))
				}
				for k, cd := range got {
					if d := sameClientData(cd, full[b[0]+k]); d != "" {
						t.Errorf("block %v, node %d: %s", b, b[0]+k, d)
					}
				}
			}
		})
	}
}

// A Run hosting a block holds the data of its nodes only, the full build's
// bits, and builds no other client; the supervisor of workers builds no
// client's data.
func TestBuildHosting(t *testing.T) {
	sc := smallScenario(t, "clients: 7\ndata: {train: 12, val: 6, test: 6}\nsgp: {rounds: 4, batch: 4}\n")
	full, err := Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := full.Hosted(); lo != 0 || hi != 7 {
		t.Fatalf("full build hosts %d … %d", lo, hi-1)
	}
	part, err := Build(sc, Hosting(2, 5))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		_, ferr := part.Factory()(i)
		if i >= 2 && i < 5 {
			if d := sameClientData(part.Data[i], full.Data[i]); d != "" {
				t.Errorf("node %d: %s", i, d)
			}
			if ferr != nil {
				t.Errorf("node %d: %v", i, ferr)
			}
			continue
		}
		if part.Data[i].Train != nil {
			t.Errorf("node %d outside the block has data", i)
		}
		if ferr == nil {
			t.Errorf("node %d outside the block: built", i)
		}
	}
	for _, bad := range [][2]int{{-1, 2}, {3, 2}, {0, 8}} {
		if _, err := Build(sc, Hosting(bad[0], bad[1])); err == nil {
			t.Errorf("Hosting(%d, %d) of 7 nodes: no error", bad[0], bad[1])
		}
	}

	// A server algorithm's plan and server read every node's data.
	fed := smallScenario(t, "clients: 4\nalgorithm: fedavg\nnetwork: {kind: star}\ndata: {train: 20, val: 10, test: 10}\n")
	srv, err := Build(fed, Hosting(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range srv.Data {
		if d.Train == nil {
			t.Errorf("fedavg hosting node 1: node %d has no data", i)
		}
	}

	sc.Runtime.Workers = []string{"127.0.0.1:7000", "127.0.0.1:7001"}
	sup, err := Build(sc, supervisorBuild(sc)...)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range sup.Data {
		if d.Train != nil {
			t.Errorf("the supervisor built node %d's data", i)
		}
	}
	sc.Hypergradient.Oracle = true // the supervisor computes it from every node's data
	if opts := supervisorBuild(sc); len(opts) != 0 {
		t.Errorf("with the oracle, the supervisor builds %d options, want a full build", len(opts))
	}
}

// smallScenario decodes and validates a scenario text.
func smallScenario(t *testing.T, text string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("test", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
