// Package fbo holds federated bilevel optimization with a server: FedNest,
// LFedNest (Tarzanagh et al. 2022) and FBO-AggITD (fbo-aggitd paper,
// Alg. 1–4), which register themselves as the algorithms "fednest",
// "lfednest" and "fbo-aggitd", and the server, client and schedule they
// share.
//
// Names follow the fbo-aggitd paper: x is the OUTER variable, y the INNER
// one, g_i = G_i(x, y) the lower cost on client i's training part, f_i =
// F_i(x, y) the upper cost on its validation part. In models.Bilevel the
// inner variable is called x and the outer λ, so a call reads
// model.InnerGrad(dst, y, x, …).
//
// A communication round (Table 1) is two runtime rounds: in the first the
// server sends to the participating clients S (what they need, e.g. y or an
// aggregate), in the second the clients of S upload and the server averages
// what arrived. The clients S (participation·m of them) are drawn by the
// server once per outer iteration from its own stream (with redraw, as the
// FedNest authors' released code does, afresh for every lower round and,
// for FedNest and LFedNest, once more for the hyper-gradient rounds; each
// draw's first message carries x). One phase of the
// program holds eval_every outer iterations; its Args carry the per-
// iteration draws (AggITD's Q, FedNest's T'), drawn by the program from the
// server's scheduling stream (seed, node 0, PurposeDraw), so that server and
// clients know the schedule of the phase's rounds.
//
// The files: params.go (the shared parameters), schedule.go (the rounds of
// a phase and the program), server.go and client.go (the two sides of a
// round), local.go (a client's inner and outer computations),
// checkpoint.go (the state kept between phases), and one file per
// algorithm.
//
// It may import optim, models, internal and gonum; never scenarios, run,
// actors or wire.
package fbo
