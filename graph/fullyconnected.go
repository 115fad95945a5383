package graph

func init() {
	Topologies.Register("fully-connected",
		"Every link is up at every round and every sender gives 1/n to each node: SGP becomes FedAvg (PDBO paper App. D, FC).",
		func() Topology { return &FullyConnected{} })
}

// FullyConnected links every pair at every round with push weights 1/n.
type FullyConnected struct{}

// Validate implements Topology.
func (*FullyConnected) Validate(int) error { return nil }

// LinkCount implements Topology.
func (*FullyConnected) LinkCount(n int) int64 { return dense(n) }

// Build implements Topology.
func (*FullyConnected) Build(n int, _ uint64) (*Network, error) {
	nw := &Network{N: n, Prob: identity(n), Symmetric: true, Mixing: make([][]float64, n)}
	for i := range n {
		nw.Mixing[i] = make([]float64, n)
		for j := range n {
			nw.Prob[i][j] = 1
			nw.Mixing[i][j] = 1 / float64(n)
		}
	}
	return nw, nil
}

// OneWay implements Topology.
func (f *FullyConnected) OneWay() bool { return false }

// ConnectedByConstruction implements ConnectedByConstruction.
func (f *FullyConnected) ConnectedByConstruction() bool { return true }
