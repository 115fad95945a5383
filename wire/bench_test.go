package wire

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"hgpsim/graph"
	"hgpsim/optim"
)

// BenchmarkPeerBatch encodes and decodes a worker's batch as the transport
// does (build, marshal, unmarshal, outboxes back): 10 senders each pushing
// its d-vector to 10 receivers of the other worker.
func BenchmarkPeerBatch(b *testing.B) {
	const n = 20
	nw, err := (&graph.FullyConnected{}).Build(n, 1)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []int{10, 7850} {
		ports := make([]*optim.Port, n/2)
		for i := range ports {
			v := make([]float64, d)
			for j := range v {
				v[j] = float64(i*d+j) * 1e-3
			}
			ports[i] = optim.NewPort(nw, i)
			r := ports[i].Open("sgp", 17, 3)
			optim.Push(ports[i], r.Links, optim.Payload{Kind: optim.KindModel, Vec: v, Mass: 0.1})
		}
		b.Run(map[int]string{10: "d=10", 7850: "d=7850"}[d], func(b *testing.B) {
			for b.Loop() {
				raw, err := Marshal(NewPeerBatch(1, 3, 9, 0, ports, n/2, n))
				if err != nil {
					b.Fatal(err)
				}
				var m PeerBatch
				if err := proto.Unmarshal(raw, &m); err != nil {
					b.Fatal(err)
				}
				if _, err := m.OptimOutboxes(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
