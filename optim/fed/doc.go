// Package fed is the federated skeleton of hgpsim and the federated
// averaging family built on it: FedAvg, FedProx, FedAdam, FedYogi,
// FedAdagrad, Ditto, pFedMe and FedAvg-Oracle.
//
// Node 0 is the server, the hub of a star whose links the edge process may
// drop; nodes 1 … m are its clients. A communication round is two runtime
// rounds: in the down round (even index) the server sends the global model
// to the clients it chose, in the up round (odd index) those that received
// it train locally and upload, and the server aggregates what arrived. The
// split follows Flower's: a Strategy owns the server side (Configure: whom
// to send what; Aggregate: combine the uploads that arrived, tolerating
// lost ones), a Trainer owns a client's local work. Server and Client turn
// them into optim behaviours, with the round parity, the choice of the
// server's broadcast, double-buffered sends and checkpoint state written
// once. Sampler draws the participating clients from the server's own
// stream; SGD is the local trainer of FedAvg with a hook on every local
// step (FedProx's proximal term); ServerStep is the hook on the server's
// step (FedAdam's Adam step), whose state the step declares on a
// ServerState and the server checkpoints; Averaging is the averaging
// server of the weighted-nodes paper's baselines.
//
// Every algorithm registers itself in optim.Algorithms from an init
// function; optim/families links the package.
//
// It may import optim, models, internal and gonum; never scenarios, run,
// actors or wire.
package fed
