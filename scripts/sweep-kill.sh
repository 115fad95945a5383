#!/usr/bin/env bash
# Kill a sweep with SIGKILL at random moments, continue it each time with
# the same command, and compare its outputs byte for byte with those of a
# sweep that was never stopped (docs/checkpoint.md). Not part of CI.
#
#   go build -o hgpsim . && scripts/sweep-kill.sh [WORKDIR]
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

# 12 runs: 2 methods × 2 link reliabilities × 3 seeds. The PDBO runs have
# 5 outer steps (a checkpoint before each), the SGP runs one phase cut at
# its 10 evaluations.
sweep=(sweep scenarios/failures/links.yaml --methods sgp,pdbo-mtl-da
	--grid network.delta_min+network.delta_max=0.3,0.7 --seeds 1-3
	--jobs 2 --curves train_loss,consensus)

start=$(date +%s.%N)
"$bin" "${sweep[@]}" --out "$ref" >/dev/null 2>"$work/uninterrupted.log"
wall=$(echo "$(date +%s.%N) - $start" | bc)
echo "uninterrupted sweep: $(count "$ref"/*/summary.json) runs in ${wall%.*} s"

# Kill moments: uniform in [0.5 s, a third of the uninterrupted wall
# time] after each start, so that every attempt gets somewhere and the
# kills spread over the whole sweep.
max_ms=$(echo "$wall * 1000 / 3" | bc)
echo "kill moments seeded with SEED=$seed"
for k in $(seq 1 "$kills"); do
	delay_ms=$((500 + (RANDOM * 32768 + RANDOM) % (max_ms > 500 ? max_ms - 500 : 1)))
	"$bin" "${sweep[@]}" --out "$killed" >/dev/null 2>>"$work/killed.log" &
	pid=$!
	sleep "$(echo "scale=3; $delay_ms / 1000" | bc)"
	if kill -KILL "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		done_runs=$(count "$killed"/*/summary.json)
		cps=$(count "$killed"/*/checkpoint.bin)
		echo "kill $k: SIGKILL after $delay_ms ms: $done_runs runs complete, $cps with a checkpoint"
	else
		wait "$pid" || true
		echo "kill $k: the sweep ended before $delay_ms ms"
	fi
done
"$bin" "${sweep[@]}" --out "$killed" >/dev/null 2>>"$work/killed.log"
echo "continued to the end: $(grep -c 'completed earlier, kept' "$work/killed.log" || true) kept and $(grep -c 'resumed from its checkpoint' "$work/killed.log" || true) resumed runs over all attempts"

status=0
compared=0
for f in results.csv study.csv study.md validation.png test_acc.png test_acc_p10.png consensus.png curve-train_loss.png curve-consensus.png; do
	[ -e "$ref/$f" ] || continue
	compared=$((compared + 1))
	cmp -s "$ref/$f" "$killed/$f" || { echo "DIFFERS: $f"; status=1; }
done
for d in "$ref"/*/; do
	run=$(basename "$d")
	for f in metrics.jsonl summary.json scenario.yaml; do
		compared=$((compared + 1))
		cmp -s "$d/$f" "$killed/$run/$f" || { echo "DIFFERS: $run/$f"; status=1; }
	done
done
if [ "$status" = 0 ]; then
	echo "IDENTICAL: $compared files (tables, plots, and every run's metrics.jsonl, summary.json, scenario.yaml)"
fi
exit "$status"
