package scenarios_test

import (
	"path/filepath"
	"testing"

	_ "hgpsim/experiments" // the experiments the shipped scenarios name
	"hgpsim/scenarios"
)

func TestShippedScenariosValidate(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped scenarios found: %v", err)
	}
	paper, err := filepath.Glob("paper/*.yaml")
	if err != nil || len(paper) < 5 {
		t.Fatalf("paper scenarios missing: %v %v", paper, err)
	}
	files = append(files, paper...)
	// Validation needs no data files (issue 7): this runs on machines
	// without the dataset packages too.
	for _, f := range files {
		sc, err := scenarios.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := scenarios.Check(f, sc, scenarios.CheckOptions{MaxMemory: -1}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
