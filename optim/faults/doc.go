// Package faults holds the client faults a scenario assigns to chosen
// clients (`faults:`): the Faults registry, the Fault interface and the
// shipped faults (byzantine, straggler). A fault wraps whatever behaviour
// a client runs in each phase, seeing only the Round, the Outbox and the
// typed payloads, so one fault works with every algorithm. It is built
// with an optim.Env (seed, node count, the client, the phase and random
// streams named by purpose), so a new fault is one file here and needs no
// edit of the core.
//
// It may import optim, models, graph, compress and internal packages;
// never scenarios, run, actors or wire.
package faults
