// Package nodeweights holds the algorithms of the weighted-nodes paper
// (Federated learning on adaptively weighted nodes by bilevel
// optimization): weighted-nodes, its bilevel method (Alg. 2/3), which
// learns the weights of the nodes on a capped simplex from the center's
// validation data; local-svrg, FedAvg as the paper runs it (Local-SVRG,
// Alg. 1, on the federated skeleton of optim/fed); and local-train, SVRG
// at the center alone. The baselines Ditto and pFedMe live in optim/fed,
// with the parameters all of them share (fed.WeightedCommon).
//
// Node 0 is the center, the hub of a star, holding D^valid and D^test;
// nodes 1 … K hold their training data. Every algorithm runs one phase per
// outer iteration, evaluated at its last round by the center.
//
// It may import optim, optim/fed, models, internal and gonum; never
// scenarios, run, actors or wire.
package nodeweights
