#!/usr/bin/env bash
# Kill a sweep with SIGKILL at random moments, continue it each time with
# the same command, and compare its outputs byte for byte with those of a
# sweep that was never stopped (docs/checkpoint.md). Not part of CI.
#
#   go build -o hgpsim . && scripts/sweep-kill.sh [WORKDIR]
#
# Environment: HGPSIM (the binary, default ./hgpsim), KILLS (default 5),
# SEED (seeds the kill moments; default: random, printed); see kill-loop.sh.
set -euo pipefail

# shellcheck source=scripts/kill-loop.sh
source "$(dirname "$0")/kill-loop.sh"

# 12 runs: 2 methods × 2 link reliabilities × 3 seeds. The PDBO runs have
# 5 outer steps (a checkpoint before each), the SGP runs one phase cut at
# its 10 evaluations.
sweep=(sweep scenarios/failures/links.yaml --methods sgp,pdbo-mtl-da
	--grid network.delta_min+network.delta_max=0.3,0.7 --seeds 1-3
	--jobs 2 --curves train_loss,consensus)

kill_loop sweep 3 '*/summary.json' '*/checkpoint.bin' "${sweep[@]}"
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
