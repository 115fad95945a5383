#!/usr/bin/env bash
# Kill an experiment with SIGKILL at random moments, continue it each time
# with the same command, and compare its outputs byte for byte with those
# of an experiment that was never stopped; then rebuild them with
# `hgpsim report` and compare again (docs/checkpoint.md). Not part of CI.
#
#   go build -o hgpsim . && scripts/experiment-kill.sh [WORKDIR]
#
# Environment: HGPSIM (the binary, default ./hgpsim), KILLS (default 5),
# SEED (seeds the kill moments; default: random, printed).
set -euo pipefail

bin=${HGPSIM:-./hgpsim}
kills=${KILLS:-5}
seed=${SEED:-$$}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
ref=$work/uninterrupted
killed=$work/killed
rm -rf "$ref" "$killed"
RANDOM=$seed
shopt -s nullglob
count() { local f=("$@"); echo "${#f[@]}"; }

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

start=$(date +%s.%N)
"$bin" "${cmd[@]}" --out "$ref" >/dev/null 2>"$work/uninterrupted.log"
wall=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted experiment: $(count "$ref"/runs/*/done.json) runs in ${wall%.*} s"

# Kill moments: uniform in [0.5 s, a fifth of the uninterrupted wall
# time] after each start, so that every attempt gets somewhere and the
# kills spread over the whole experiment.
max_ms=$(echo "$wall * 1000 / 5" | bc)
echo "kill moments seeded with SEED=$seed"
for k in $(seq 1 "$kills"); do
	delay_ms=$((500 + (RANDOM * 32768 + RANDOM) % (max_ms > 500 ? max_ms - 500 : 1)))
	"$bin" "${cmd[@]}" --out "$killed" >/dev/null 2>>"$work/killed.log" &
	pid=$!
	sleep "$(echo "scale=3; $delay_ms / 1000" | bc)"
	if kill -KILL "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		done_runs=$(count "$killed"/runs/*/done.json)
		cps=$(count "$killed"/runs/*/checkpoint.bin)
		echo "kill $k: SIGKILL after $delay_ms ms: $done_runs runs finished, $cps with a checkpoint"
	else
		wait "$pid" || true
		echo "kill $k: the experiment ended before $delay_ms ms"
	fi
done
"$bin" "${cmd[@]}" --out "$killed" >/dev/null 2>>"$work/killed.log"

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
