package scenarios

import "hgpsim/graph"

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
