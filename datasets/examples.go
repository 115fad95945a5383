package datasets

// Examples of the kinds that a scenario cannot name with their defaults
// alone (registry.Exampler); the tests of every registered kind use them.

// Example implements registry.Exampler: IDX files other than
// Fashion-MNIST's have no standard location.
func (d *IDXData) Example() string {
	switch d.name {
	case "mnist":
		return "data: {kind: mnist, dir: /srv/data/mnist}\n"
	case "emnist":
		return "data: {kind: emnist, dir: /srv/data/emnist, split: digits}\n"
	}
	return ""
}

// Example implements registry.Exampler: node 0 is a server.
func (*FederatedData) Example() string {
	return "algorithm: fedavg\nnetwork: {kind: star}\ndata: {kind: federated}\n"
}

// Example implements registry.Exampler: the default minority of five
// nodes needs more clients than a small run has.
func (*NodeShiftData) Example() string {
	return "clients: 4\ndata: {kind: node-shift, minority: 1, train: 20, val: 10, test: 10}\n"
}
