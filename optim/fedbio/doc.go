// Package fedbio holds the Comm-FedBiO family (Li, Pei, Huang, KDD'22):
// the federated training loop of Alg. 1 with a per-sample λ-weighted loss,
// the server (node 0, holding the clean validation set and the test set)
// and the clients (holding noisy training sets and their own λ). The
// algorithms it registers — comm-fedbio (commfedbio.go, its compressors in
// compress.go), fedavg-oracle (oracle.go) and fedbio-preprocess
// (preprocess.go) — differ in how λ is set.
//
// One outer iteration k is P runtime rounds, each exchange a pair (down,
// up):
//
//	slot 0     server → S sampled clients: y_k
//	slot 1     clients: T local steps on g_m(λ, ·), upload y_T^m; the
//	           server forms y_{k+1} = y_k + Σ N_m (y_T^m − y_k) / Σ N_m
//	slot 2+2j  server → hyper clients: [y_{k+1}; v] (j = 0) or v     (j < J)
//	slot 3+2j  hyper clients → server: compressed H_m v, or A_m     (j < J)
//	slot 2+2J  server → hyper clients: v^I, or ω̂; each updates its λ
//	slot 3+2J  idle
//
// with J = 0 (P = 2, no hyper-gradient) for the baselines. Every message
// crosses a star link the edge process may drop: a missing upload is left
// out of the average, a client that missed the state sits the call out.

// The files: training.go (the shared parameters and the plan of a run),
// server.go and client.go (the two sides of a round, the clients' results
// and F1), checkpoint.go (the state kept across rounds).
//
// It may import optim, models, compress, internal and gonum; never
// scenarios, run, actors or wire.
package fedbio
