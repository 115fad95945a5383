package run

import (
	"crypto/sha256"
	"io"
	"testing"

	"hgpsim/optim"
	"hgpsim/optim/pdbo"
)

// BenchmarkCheckpointWrite measures writing checkpoint.bin for n = 100
// PDBO clients with warm starts (each saves λ, Adam's moments and its
// 23,550-parameter iterate, the softmax ensemble of the scale scenario):
// encoding, the temporary file, fsync and rename.
func BenchmarkCheckpointWrite(b *testing.B) {
	const n, d, dl = 100, 23550, 13
	cp := &optim.Checkpoint{Clients: make([][]byte, n)}
	for i := range n {
		adam := &pdbo.Adam{LR: make([]float64, dl), Beta1: 0.9, Beta2: 0.999}
		adam.Step(make([]float64, dl), make([]float64, dl))
		ob, err := adam.SaveState()
		if err != nil {
			b.Fatal(err)
		}
		x := make([]float64, d)
		for k := range x {
			x[k] = float64(k*i) / 7
		}
		st, err := optim.EncodeState(struct {
			Lambda []float64
			Opt    []byte
			X      []float64
		}{make([]float64, dl), ob, x})
		if err != nil {
			b.Fatal(err)
		}
		cp.Clients[i] = st
	}
	sink := &runSink{sum: &Summary{Traffic: map[string]optim.Traffic{"sgp": {}, "hypergradient": {}}}}
	mw := newMetricsWriter(io.Discard, 0, sha256.New())
	dir := b.TempDir()
	size, err := saveCheckpoint(dir, [32]byte{}, cp, sink, mw, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := saveCheckpoint(dir, [32]byte{}, cp, sink, mw, nil); err != nil {
			b.Fatal(err)
		}
	}
}
