#!/usr/bin/env bash
# The recorded-links study of docs/failures.md (section 7): record bursty
# runs, replay each recorded link history under HGP, VR-HGP and the
# guarded PDBO (sgp.weight_floor), and
# tabulate them side by side into docs/failures/trace/. About a minute on
# 2 cores; needs jq. Usage:
#   go build -o hgpsim . && scripts/trace-study.sh [OUT]   (OUT: runs/trace)
set -euo pipefail
out=${1:-runs/trace}
hg=./hgpsim
scen=scenarios/failures/links.yaml
bursty='network.links={kind: burst, length: 10}'
mkdir -p "$out" docs/failures/trace
table=docs/failures/trace/study.md
{
  echo "| seed | estimator | test acc (%) | oracle rel. error | hyper-gradient norm | replay = recording |"
  echo "|---|---|---|---|---|---|"
} > "$table.tmp"
row() { # seed, label, run folder, identical?
  jq -r --arg s "$1" --arg l "$2" --arg same "$4" \
    '"| \($s) | \($l) | \(.best.test_acc * 1000 | round / 10) | \(if .hypergradient.oracle_rel_error == null then "—" else .hypergradient.oracle_rel_error * 1000 | round / 1000 end) | \(.hypergradient.norm * 10000 | round / 10000) | \($same) |"' \
    "$3/summary.json" >> "$table.tmp"
}
for s in 1 2 3 4 5; do
  links="$out/links-$s.csv.gz"
  # Record: the scenario's own estimator (VR-HGP, α = 0.9, β = 0.1) on
  # links that keep their state for blocks of 10 rounds.
  $hg run $scen --seed "$s" --set "$bursty" --out "$out/recorded-$s" --record-links "$links" 2>/dev/null
  # Replay the same link history under VR-HGP (must reproduce the
  # recording) and under HGP (α = 1, β = 0).
  $hg run $scen --seed "$s" --replay-links "$links" --out "$out/vrhgp-$s" 2>/dev/null
  $hg run $scen --seed "$s" --replay-links "$links" --set hypergradient.alpha=1 --set hypergradient.beta=0 \
    --out "$out/hgp-$s" 2>/dev/null
  # The guarded PDBO (weight floor 0.3) on the same link history.
  $hg run $scen --seed "$s" --replay-links "$links" --set sgp.weight_floor=0.3 --out "$out/guard-$s" 2>/dev/null
  same=no
  cmp -s "$out/recorded-$s/metrics.jsonl" "$out/vrhgp-$s/metrics.jsonl" && same=yes
  row "$s" "VR-HGP (0.9, 0.1)" "$out/vrhgp-$s" "$same"
  row "$s" "HGP" "$out/hgp-$s" "—"
  row "$s" "VR-HGP, weight floor 0.3" "$out/guard-$s" "—"
done
mv "$table.tmp" "$table"
$hg validate $scen --replay-links "$out/links-1.csv.gz" | grep '^links trace' | sed "s|$PWD/||" > docs/failures/trace/links-1.txt
cp "$out/recorded-1/links.png" docs/failures/trace/links-1.png
cat "$table"
