package wire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"hgpsim/optim"
)

// benchInboxes is a worker step's load on a complete graph: 10 clients
// each receiving the d-vector of every other.
func benchInboxes(d, n int) [][]optim.Message {
	pays := make([]optim.Payload, n)
	for i := range pays {
		v := make([]float64, d)
		for j := range v {
			v[j] = float64(i*d+j) * 1e-3
		}
		pays[i] = optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.1}
	}
	in := make([][]optim.Message, n)
	for k := range in {
		for i := range n {
			in[k] = append(in[k], optim.Message{From: i, Round: 17, Phase: "sgp", Weight: 1.0 / float64(n), Payload: pays[i]})
		}
	}
	return in
}

// BenchmarkWorkerStep encodes and decodes a worker step as the transport
// does (build, marshal, unmarshal, inboxes back).
func BenchmarkWorkerStep(b *testing.B) {
	for _, d := range []int{10, 7850} {
		in := benchInboxes(d, 10)
		b.Run(map[int]string{10: "d=10", 7850: "d=7850"}[d], func(b *testing.B) {
			for b.Loop() {
				raw, err := Marshal(NewWorkerStep(1, 3, nil, 9, false, 0, in))
				if err != nil {
					b.Fatal(err)
				}
				var m WorkerStep
				if err := proto.Unmarshal(raw, &m); err != nil {
					b.Fatal(err)
				}
				if _, err := m.OptimInboxes(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
