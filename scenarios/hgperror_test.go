package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHGPErrorExperimentOutputs(t *testing.T) {
	sc, err := Load("paper/hgp-error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.HGPError.M = 40
	sc.HGPError.Seeds = 2
	sc.SGP.Rounds = 200
	dir := t.TempDir()
	if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "error.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc2 := bufio.NewScanner(f)
	sc2.Scan()
	if h := sc2.Text(); h != "network,alpha,beta,seed,m,error" {
		t.Fatalf("header %q", h)
	}
	rows := 0
	for sc2.Scan() {
		if n := len(strings.Split(sc2.Text(), ",")); n != 6 {
			t.Fatalf("row %q has %d columns", sc2.Text(), n)
		}
		rows++
	}
	if want := 2 * 5 * 2 * (40 + 1); rows != want {
		t.Errorf("error.csv has %d rows, want %d", rows, want)
	}
	pf, err := os.Open(filepath.Join(dir, "error.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatalf("error.png is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("error.png is %v", b)
	}
	var sum HGPErrorSummary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Final) != 10 {
		t.Fatalf("summary has %d final entries, want 10", len(sum.Final))
	}
	for _, f := range sum.Final {
		if !(f.Median > 0) || f.P10 > f.Median || f.Median > f.P90 {
			t.Errorf("implausible quantiles %+v", f)
		}
	}
}
