package experiments

// Examples of the experiments (registry.Exampler): each needs its data
// kind. The tests of every registered kind decode and validate them.

// Example implements registry.Exampler.
func (*CommFedBiOExp) Example() string {
	return `clients: 3
network: {kind: star}
data: {kind: noisy-labels, images: synthetic, features: 4, classes: 3, train: 30, val: 20, test: 20}
experiment: {kind: comm-fedbio, rounds: 2, methods: [iter-topk, fedavg], variants: [iter-topk], rates: [2]}
`
}

// Example implements registry.Exampler.
func (*FBOTable) Example() string {
	return `clients: 4
algorithm: fbo-aggitd
network: {kind: star}
data: {kind: federated, per_client: 20}
model: {kind: mlp, hidden: 8, head: hyper-representation}
experiment: {kind: fbo-table, seeds: 1, rounds: 20, taus: [1]}
`
}

// Example implements registry.Exampler.
func (*WeightedNodesExp) Example() string {
	return `clients: 4
network: {kind: star}
data: {kind: node-shift, minority: 1, train: 20, val: 10, test: 10}
experiment: {kind: weighted-nodes, settings: [1], targets: [minority], seeds: 1, outer: 2, tune_outer: 1}
`
}
