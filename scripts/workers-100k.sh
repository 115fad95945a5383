#!/usr/bin/env bash
# 100,000 clients in one process against the same run over W local
# `hgpsim worker` processes (default 4), for docs/scale.md:
#  - rounds/s after setup: each mode runs R1 and R2 SGP rounds and the rate
#    is (R2 − R1) / (wall(R2) − wall(R1)), as scripts/sparse-bench.sh does;
#  - peak RSS of the single process and of the supervisor (/usr/bin/time)
#    and of every worker (VmHWM of /proc/PID/status, each run on fresh
#    workers);
#  - protobuf bytes through the supervisor per round (summary.json's wire)
#    at two model sizes: the scenario's, and with data.features=F2;
#  - that metrics.jsonl is identical in one process and over workers.
# The modes alternate (one process, workers, one process, workers), so
# that a change of the machine's load hits both. WORKER_GOMEMLIMIT, when
# set, is the workers' GOMEMLIMIT (e.g. 600MiB). Everything runs under
# nice. Usage:
#   go build -o hgpsim . && scripts/workers-100k.sh [SCENARIO] [R1] [R2] [W] [F2]
set -euo pipefail
hg=$(realpath ./hgpsim)
sc=${1:-scenarios/distributed/n100k.yaml}
r1=${2:-10}
r2=${3:-40}
nw=${4:-4}
f2=${5:-100}
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
export HGPSIM_WORKER_SECRET="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

# start_workers K: K fresh workers on free ports; sets pids and addrs.
start_workers() {
  pids=() addrs=()
  rm -f "$tmp"/w*.out # a worker's line must not be read from its predecessor's file
  for w in $(seq 1 "$1"); do
    if [ -n "${WORKER_GOMEMLIMIT:-}" ]; then
      GOMEMLIMIT=$WORKER_GOMEMLIMIT nice "$hg" worker --listen 127.0.0.1:0 --data-root "$PWD" > "$tmp/w$w.out" 2>&1 &
    else
      nice "$hg" worker --listen 127.0.0.1:0 --data-root "$PWD" > "$tmp/w$w.out" 2>&1 &
    fi
    pids+=($!)
  done
  for w in $(seq 1 "$1"); do
    for _ in $(seq 100); do grep -q listening "$tmp/w$w.out" && break; sleep 0.1; done
    addrs+=("$(awk '/listening/ {print $NF}' "$tmp/w$w.out")")
  done
}

# stop_workers: prints the workers' VmHWM in MB, then ends them.
stop_workers() {
  local p out=""
  for p in "${pids[@]}"; do
    out+="$(awk '/VmHWM/ {printf "%d ", $2/1024}' "/proc/$p/status")"
  done
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  echo "${out% }"
}

# one MODE ROUNDS [SET...]: runs the scenario; MODE is 1 (one process) or
# the number of workers. Sets out (the run's folder) and writes
# "wall rssMB workersMB" to $out.res.
one() {
  local k=$1 r=$2
  shift 2
  local flags=() wpeak="-"
  if [ "$k" -gt 1 ]; then
    start_workers "$k"
    flags=(--workers "$(IFS=,; echo "${addrs[*]}")")
  fi
  out="$tmp/k$k-r$r$*"
  out=${out// /}
  if ! nice /usr/bin/time -f '%e %M' -o "$tmp/time" "$hg" run "$sc" --out "$out" "${flags[@]}" \
    --set sgp.rounds="$r" --set sgp.eval_every="$r" "$@" 2>"$tmp/err"; then
    cat "$tmp/err" >&2
    exit 1
  fi
  if [ "$k" -gt 1 ]; then
    stop_workers > "$tmp/wpeak"
    wpeak=$(cat "$tmp/wpeak")
  fi
  read -r wall kb < "$tmp/time"
  echo "$wall $((kb / 1024)) $wpeak" > "$out.res"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); workers' GOMEMLIMIT: ${WORKER_GOMEMLIMIT:-none}" >&2
printf '| mode | rounds | wall (s) | peak RSS single / supervisor (MB) | worker peaks (MB) |\n|---|---|---|---|---|\n'
declare -A wall=()
for r in "$r1" "$r2"; do
  for k in 1 "$nw"; do
    one "$k" "$r"
    read -r w rss wp < "$out.res"
    wall[$k-$r]=$w
    mode="one process"
    [ "$k" -gt 1 ] && mode="$k workers"
    printf '| %s | %s | %s | %s | %s |\n' "$mode" "$r" "$w" "$rss" "$wp"
    eval "out_${k}_$r=\$out"
  done
done
for r in "$r1" "$r2"; do
  a="out_1_$r" b="out_${nw}_$r"
  cmp "${!a}/metrics.jsonl" "${!b}/metrics.jsonl"
done
echo "metrics.jsonl identical in one process and over $nw workers ($r1 and $r2 rounds); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for k in 1 "$nw"; do
  awk -v a="${wall[$k-$r1]}" -v b="${wall[$k-$r2]}" -v r1="$r1" -v r2="$r2" -v k="$k" \
    'BEGIN { printf "%s: %.2f rounds/s after setup\n", (k == 1 ? "one process" : k " workers"), (r2 - r1) / (b - a) }' >&2
done

# Bytes through the supervisor per round at two model sizes.
printf '\n| features | d | step bytes/round | ack bytes/round |\n|---|---|---|---|\n'
b="out_${nw}_$r1"
for f in base "$f2"; do
  if [ "$f" = base ]; then
    dir=${!b}
  else
    one "$nw" "$r1" --set data.features="$f"
    dir=$out
  fi
  feats=$(grep -m1 -o 'features: [0-9]*' "$dir/scenario.yaml" | awk '{print $2}')
  classes=$(grep -m1 -o 'classes: [0-9]*' "$dir/scenario.yaml" | awk '{print $2}')
  jq -r --arg f "$feats" --arg d "$(((feats + 1) * classes))" \
    '"| \($f) | \($d) | \(.wire.step_bytes / .wire.rounds | round) | \(.wire.ack_bytes / .wire.rounds | round) |"' "$dir/summary.json"
done
