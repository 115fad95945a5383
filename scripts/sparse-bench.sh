#!/usr/bin/env bash
# Rounds per second and peak memory of a large sparse run in one process:
# the scenario with R1 and R2 rounds on each driver, so that the rate is
# (R2 − R1) / (wall(R2) − wall(R1)), without building data and network.
# Checks that both drivers write the same metrics.jsonl.
#   go build -o hgpsim . && scripts/sparse-bench.sh [SCENARIO] [R1] [R2]
set -euo pipefail
hg=$(realpath ./hgpsim)
sc=${1:-scenarios/distributed/n100k.yaml}
r1=${2:-10}
r2=${3:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| driver | rounds | wall (s) | peak RSS (MB) |\n|---|---|---|---|\n'
for drv in sequential actors; do
  declare -A wall=()
  for r in "$r1" "$r2"; do
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$hg" run "$sc" --out "$tmp/$drv-$r" \
      --set runtime.driver="$drv" --set sgp.rounds="$r" --set sgp.eval_every="$r" 2>/dev/null
    read -r w kb < "$tmp/time"
    wall[$r]=$w
    printf '| %s | %s | %s | %d |\n' "$drv" "$r" "$w" $((kb / 1024))
  done
  awk -v a="${wall[$r1]}" -v b="${wall[$r2]}" -v r1="$r1" -v r2="$r2" -v d="$drv" \
    'BEGIN { printf "%s: %.2f rounds/s after setup\n", d, (r2 - r1) / (b - a) }' >&2
done
cmp "$tmp/sequential-$r1/metrics.jsonl" "$tmp/actors-$r1/metrics.jsonl"
echo "metrics.jsonl identical for both drivers" >&2
