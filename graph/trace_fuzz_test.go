package graph

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/internal/registry"
)

// maxTraceFuzzInput bounds FuzzTrace's inputs: no code path needs more.
const maxTraceFuzzInput = 64 << 10

// FuzzTrace feeds the links-trace reader any bytes, plain or gzipped: it
// must return a trace or an error naming the file, never panic, and a
// trace it accepts must build and replay.
func FuzzTrace(f *testing.F) {
	seeds := []string{"round,from,to,up\n0,0,1,1\n0,1,0,1\n0,1,2,1\n0,2,1,1\n1,0,1,0\n",
		"round,from,to,up,delay\n0,0,1,1,2\n0,1,0,1,0\n",
		"#! clients=3\n#! rounds=5\nround,from,to,up\n0,0,1,1\n",
		`{"round":0,"from":0,"to":1,"up":true}` + "\n" + `{"round":2,"from":1,"to":0,"up":1,"delay":1}` + "\n",
		"", "round,from,to,up\n", "from,to\n", "\n\n\r\n"}
	if b, err := os.ReadFile("../docs/links-example.csv"); err == nil {
		seeds = append(seeds, string(b))
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, gz bool) {
		if len(b) > maxTraceFuzzInput {
			t.Skipf("%d bytes of input", len(b))
		}
		if gz {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			_, _ = w.Write(b)
			_ = w.Close()
			b = buf.Bytes()
		}
		path := filepath.Join(dir, "t.csv")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := ScanTrace(path, 0, true)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if sum.Clients < 2 || sum.Rounds == 0 {
			t.Fatalf("accepted a trace of %d clients and %d rounds", sum.Clients, sum.Rounds)
		}
		if sum.Clients > 64 {
			return // a network that large costs more than it tests
		}
		topo := registry.Choose[Topology]("stochastic-directed")
		topo.Params.(*Stochastic).Process = registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: "loop"}}
		nw, err := Build(topo, sum.Clients, 1)
		if err != nil {
			return // e.g. a trace whose links leave a client unreachable
		}
		var dst []int
		for tick := range min(sum.Rounds+3, 50) {
			for i := range nw.N {
				dst = nw.Realize(i, tick, dst[:0])
			}
		}
	})
}
