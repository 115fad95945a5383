package scenarios

import (
	"hgpsim/graph"
	"hgpsim/optim/pdbo"
)

// ExactEstimateLimit bounds the client count for which runs compare the
// Alg. 2 estimates with the truth: the exact p̄ costs O(n³) (18 s at
// n = 1000 on the project machine) and the delivery record O(n²) memory.
const ExactEstimateLimit = pdbo.ExactEstimateLimit

// BuildNetwork builds the scenario's network; a network that breaks an
// assumption is an input error.
func BuildNetwork(sc Scenario) (*graph.Network, error) {
	nw, err := graph.Build(sc.Network.Topology, sc.Nodes(), sc.Seed)
	if err != nil {
		return nil, invalid("scenario", "network: %s", err.Error())
	}
	if err := nw.SetFailures(sc.Network.Failures); err != nil {
		return nil, invalid("scenario", "network.%s", err.Error())
	}
	return nw, nil
}
