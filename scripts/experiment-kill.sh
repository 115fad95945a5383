#!/usr/bin/env bash
# Kill an experiment with SIGKILL at random moments, continue it each time
# with the same command, and compare its outputs byte for byte with those
# of an experiment that was never stopped; then rebuild them with
# `hgpsim report` and compare again (docs/checkpoint.md). Not part of CI.
#
#   go build -o hgpsim . && scripts/experiment-kill.sh [WORKDIR]
#
# Environment: HGPSIM (the binary, default ./hgpsim), KILLS (default 5),
# SEED (seeds the kill moments; default: random, printed); see kill-loop.sh.
set -euo pipefail

# shellcheck source=scripts/kill-loop.sh
source "$(dirname "$0")/kill-loop.sh"

# comm-fedbio on synthetic noisy labels: 6 derived runs of 1,500 rounds
# (a few seconds each), evaluated every 50 rounds, where a run may take a
# checkpoint (at most one a second).
cat >"$work/experiment.yaml" <<'YAML'
name: experiment-kill
seed: 3
clients: 10
network: {kind: star, prob: 1}
data: {kind: noisy-labels, images: synthetic, features: 20, classes: 5, train: 300, val: 100, test: 100, rho: 0.4}
model: {kind: softmax, l2: 0.001}
runtime: {driver: sequential}
experiment:
  kind: comm-fedbio
  rounds: 1500
  lr: 0.2
  batch: 16
  eval_every: 50
  iterations: 3
  alpha: 0.3
  hvp_batch: 0
  noises: [iid]
  methods: [iter-topk, fedavg, fedavg-oracle]
  curve_compression: 2
  variants: [iter-topk, non-iter]
  rates: [2, 4]
YAML
cmd=(run "$work/experiment.yaml")

kill_loop experiment 5 'runs/*/done.json' 'runs/*/checkpoint.bin' "${cmd[@]}"

status=0
compared=0
outputs=(curves.csv f1.csv bytes.csv summary.json accuracy.png f1.png)
compare_outputs() {
	for f in "${outputs[@]}"; do
		compared=$((compared + 1))
		cmp -s "$ref/$f" "$killed/$f" || { echo "DIFFERS ($1): $f"; status=1; }
	done
}
compare_outputs continued
for d in "$ref"/runs/*/; do
	r=$(basename "$d")
	for f in stream.bin done.json scenario.yaml; do
		compared=$((compared + 1))
		cmp -s "$d/$f" "$killed/runs/$r/$f" || { echo "DIFFERS: runs/$r/$f"; status=1; }
	done
done
for f in "${outputs[@]}"; do rm "$killed/$f"; done
"$bin" report "$killed" >/dev/null
compare_outputs report
if [ "$status" = 0 ]; then
	echo "IDENTICAL: $compared files (the outputs after the kills and again rebuilt by report, and every run's stream.bin, done.json, scenario.yaml)"
fi
exit "$status"
