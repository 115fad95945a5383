package testscen

// Tiny is a six-client VR-HGP run on a stochastic directed network that
// finishes in milliseconds.
const Tiny = `
name: tiny
seed: 3
clients: 6
network:
  kind: stochastic-directed
data:
  train: 40
  val: 10
  test: 10
model:
  head: label-weights
sgp:
  rounds: 40
  batch: 8
  eval_every: 10
  lr:
    schedule: constant
    base: 0.1
hypergradient:
  estimator: vr-hgp
  m: 6
  batch: 8
  eval_every: 5
`

// TinyPDBO is a four-client PDBO-DA run (exact backprop on a
// fully-connected network, two outer steps) on the actor runtime.
const TinyPDBO = `
name: tiny-pdbo
seed: 5
clients: 4
method: pdbo-da
network:
  kind: fully-connected
data:
  classes: 3
  features: 4
  train: 40
  val: 20
  test: 20
  alpha: 0.3
model:
  l2: 0.01
  outer_l2: 0
sgp:
  rounds: 300
  batch: 0
  eval_every: 0
  lr:
    schedule: constant
    base: 0.5
hypergradient:
  estimator: exact
  m: 100
outer:
  steps: 2
  optimizer: adam
  lr: 0.1
runtime:
  driver: actors
`
