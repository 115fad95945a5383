// Package pdbo is the family of personalized decentralized bilevel
// optimization (the PDBO paper): Stochastic Gradient Push over push-sum
// with Alg. 2's counts of p̄_ij and δ̄_{j→i} (Eq. 2–4), the hyper-gradient
// estimators of the Estimators registry (HGP, Eq. 12; VR-HGP, App. B;
// exact recurrent backpropagation, Eq. 11; the local baseline), the dense
// oracles that check them, the outer optimizers of λ, and Alg. 1, the
// program that schedules SGP, hyper-gradient and outer phases.
//
// The pdbo algorithm registers itself in optim.Algorithms. Its parameters
// are three top-level sections of a scenario — sgp, hypergradient and
// outer, whose types (SGPSpec, HypergradientSpec, OuterSpec) live here and
// which the scenario embeds under those keys — so it is an
// optim.SectionOwner and reads them through optim.Setup.Sections when it
// plans a run. It also decides the run's network: the local baselines
// train over self-loops only.
//
// Names follow the paper: z and omega are the push-sum pair y = (z, ω)
// with debiased parameters x = z/ω, pBar and deltaBar the estimates of
// Alg. 2, and the two SGP variants Eq. (4a) (BeforeComm) and Eq. (4b)
// (AfterComm).
//
// It may import optim, models, graph, compress, internal packages and
// gonum; never scenarios, run, actors or wire.
package pdbo
