package models

// Examples of the kinds that a scenario cannot name with their defaults
// alone (registry.Exampler); the tests of every registered kind use them.

// Example implements registry.Exampler: logistic regression is binary.
func (*LogisticSpec) Example() string {
	return "data: {classes: 2}\nmodel: {kind: logistic}\n"
}

// Example implements registry.Exampler: a CNN needs image-shaped rows and
// its layers.
func (*CNNSpec) Example() string {
	return `data: {features: 16, classes: 3}
model:
  kind: cnn
  input: [1, 4, 4]
  layers: [{kind: conv2d, out: 2, kernel: 3}, {kind: relu}, {kind: flatten}, {kind: dense, out: 3}]
`
}

// Example implements registry.Exampler: the head splits an mlp, for the
// federated bilevel algorithms.
func (*hyperRepHead) Example() string {
	return `clients: 4
algorithm: {kind: fbo-aggitd, outer_steps: 2}
network: {kind: star}
model: {kind: mlp, hidden: 4, head: hyper-representation}
`
}
