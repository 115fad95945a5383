#!/usr/bin/env bash
# Runs the edge-failure study of docs/failures.md and copies its tables and
# plots into docs/failures/. About 10 minutes on 2 cores; needs jq. Usage:
#   go build -o hgpsim . && scripts/failures-study.sh [OUT]   (OUT: runs/failures)
set -euo pipefail
out=${1:-runs/failures}
hg=./hgpsim
methods=sgp,pdbo-mtl-da
study="--seeds 1-5 --jobs 2"
plots=test_acc,consensus,oracle_rel_error,p_bar_error,delta_bar_error,lowest_weight

# 1. Bernoulli against Gilbert–Elliott links at equal δ̄ (every link exactly δ̄).
$hg sweep scenarios/failures/links.yaml --methods $methods $study \
  --grid network.delta_min+network.delta_max=0.2,0.5,0.8 \
  --grid network.links=bernoulli,gilbert-elliott \
  --plot $plots,max_hypergradient_norm --curves consensus --out "$out/links"

# 2. Churn: every client offline a share of the rounds, in periods of 10.
$hg sweep scenarios/failures/links.yaml --methods $methods $study --set name=churn \
  --set 'network.failures=[{kind: churn, offline: 0.1, mean_offline: 10}]' \
  --grid network.failures.0.offline=0,0.1,0.3,0.5 \
  --plot $plots --out "$out/churn"

# 3. A partition into two halves from round 0 that heals at round `to`.
$hg sweep scenarios/failures/links.yaml --methods $methods $study --set name=partition \
  --set 'network.failures=[{kind: partition, groups: [[0, 1, 2, 3, 4]], from: 0, to: 1}]' \
  --grid network.failures.0.to=1,50,100,150 \
  --plot $plots --curves consensus --out "$out/partition"

# 4. Delays: half the messages arrive 1 … max rounds late.
$hg sweep scenarios/failures/links.yaml --methods $methods $study --set name=delay \
  --set 'network.failures=[{kind: delay, prob: 0.5, min: 1, max: 1}]' \
  --grid network.failures.0.max=1,2,5,10 \
  --plot $plots --out "$out/delay"

# 5. The bursty divergence: SGP on δ̄ ~ U[0.1, 0.2], independent vs bursty links.
$hg sweep scenarios/failures/bursty.yaml --seeds 1-10 --jobs 2 \
  --grid network.links=bernoulli,burst,gilbert-elliott \
  --plot test_acc,lowest_weight,max_consensus,max_train_loss --curves consensus,min_weight --out "$out/bursty" ||
  echo "(a bursty run diverged: expected, see docs/failures.md)"
# ... and the first 60 rounds of one bursty run, evaluated every round, to
# see what moves first.
$hg sweep scenarios/failures/bursty.yaml --set network.links=burst --set sgp.eval_every=1 --set sgp.rounds=60 \
  --curves train_loss,consensus,min_weight --plot test_acc --out "$out/bursty-first-rounds"
jq -r 'select(.client == "all") | [.round, .train_loss, .consensus, .min_weight] | @tsv' \
  "$out/bursty-first-rounds/bursty/metrics.jsonl" > "$out/bursty-first-rounds/first-rounds.tsv"

# 6. The small-weight guard (sgp.weight_floor): the bursty study with the
# guard off and at three floors, and PDBO-MTL&DA on the links study's
# unreliable cells, 10 seeds each.
$hg sweep scenarios/failures/bursty.yaml --seeds 1-10 --jobs 2 \
  --grid network.links=bernoulli,burst,gilbert-elliott --grid sgp.weight_floor=0,0.1,0.3,0.5 \
  --plot test_acc,lowest_weight,max_consensus,max_train_loss --out "$out/guard-bursty" ||
  echo "(the unguarded bursty runs diverge: expected)"
$hg sweep scenarios/failures/links.yaml --seeds 1-10 --jobs 2 \
  --grid network.delta_min+network.delta_max=0.2,0.5 --grid network.links=bernoulli,gilbert-elliott \
  --grid sgp.weight_floor=0,0.3 \
  --plot test_acc,oracle_rel_error,max_hypergradient_norm,lowest_weight --out "$out/guard-links"
$hg sweep scenarios/failures/bursty.yaml --seeds 1-10 --jobs 2 \
  --set method=pdbo-mtl-da --set model.k=3 --set hypergradient.estimator=auto --set hypergradient.m=100 \
  --set hypergradient.batch=32 --set outer.steps=5 \
  --grid network.links=bernoulli,burst,gilbert-elliott --grid sgp.weight_floor=0,0.3 \
  --plot test_acc,max_hypergradient_norm,max_train_loss,lowest_weight --out "$out/guard-bursty-pdbo" ||
  echo "(the unguarded bursty runs diverge: expected)"

mkdir -p docs/failures
for s in links churn partition delay bursty bursty-first-rounds guard-bursty guard-links guard-bursty-pdbo; do
  mkdir -p "docs/failures/$s"
  cp "$out/$s"/study.md "$out/$s"/study.csv "$out/$s"/results.csv "$out/$s"/*.png "docs/failures/$s/"
done
cp "$out/bursty-first-rounds/first-rounds.tsv" docs/failures/bursty-first-rounds/
