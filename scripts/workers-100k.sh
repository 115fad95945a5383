#!/usr/bin/env bash
# 100,000 clients in one process against the same run over W local
# `hgpsim worker` processes (default 4), for docs/scale.md:
#  - rounds/s after setup: each mode runs R1 and R2 SGP rounds and the rate
#    is (R2 − R1) / (wall(R2) − wall(R1)), as scripts/sparse-bench.sh does;
#  - CPU seconds (user + system) of the single process, the supervisor and
#    the workers together: on a shared machine, wall time follows the load
#    and CPU time much less;
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
# (F2 = 0 measures the bytes at the scenario's size only.)
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

# stop_workers: prints the workers' VmHWM in MB and, after "/", their
# CPU seconds (user + system) in all, then ends them.
stop_workers() {
  local p out="" ticks=0 hz
  hz=$(getconf CLK_TCK)
  for p in "${pids[@]}"; do
    out+="$(awk '/VmHWM/ {printf "%d ", $2/1024}' "/proc/$p/status")"
    ticks=$((ticks + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  out+="/ $(awk -v t="$ticks" -v hz="$hz" 'BEGIN {printf "%.1f", t / hz}')"
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  echo "$out"
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
  if ! nice /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$hg" run "$sc" --out "$out" "${flags[@]}" \
    --set sgp.rounds="$r" --set sgp.eval_every="$r" "$@" 2>"$tmp/err"; then
    cat "$tmp/err" >&2
    exit 1
  fi
  if [ "$k" -gt 1 ]; then
    stop_workers > "$tmp/wpeak"
    wpeak=$(cat "$tmp/wpeak")
  fi
  read -r wall kb us ss < "$tmp/time"
  echo "$wall $((kb / 1024)) $(awk -v u="$us" -v s="$ss" 'BEGIN {printf "%.1f", u + s}') $wpeak" > "$out.res"
}

echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); workers' GOMEMLIMIT: ${WORKER_GOMEMLIMIT:-none}" >&2
printf '| mode | rounds | wall (s) | CPU s: single / supervisor | CPU s: workers | peak RSS single / supervisor (MB) | worker peaks (MB) |\n|---|---|---|---|---|---|---|\n'
declare -A wall=() cpus=()
for r in "$r1" "$r2"; do
  for k in 1 "$nw"; do
    one "$k" "$r"
    read -r w rss cpu wp < "$out.res"
    wall[$k-$r]=$w
    mode="one process" wcpu="-"
    if [ "$k" -gt 1 ]; then
      mode="$k workers" wcpu=${wp#*/ } wp=${wp%/*}
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$mode" "$r" "$w" "$cpu" "$wcpu" "$rss" "${wp% }"
    cpus[$k-$r]=$(awk -v a="$cpu" -v b="${wcpu/-/0}" 'BEGIN {print a + b}')
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
    -v c="${cpus[$k-$r1]}" -v e="${cpus[$k-$r2]}" \
    'BEGIN { printf "%s: %.2f rounds/s after setup, %.2f CPU s a round (all processes)\n", (k == 1 ? "one process" : k " workers"), (r2 - r1) / (b - a), (e - c) / (r2 - r1) }' >&2
done

# Bytes through the supervisor per round at two model sizes.
printf '\n| features | d | step bytes/round | ack bytes/round |\n|---|---|---|---|\n'
b="out_${nw}_$r1"
sizes=(base)
[ "$f2" = 0 ] || sizes+=("$f2") # F2 = 0: the scenario's size only
for f in "${sizes[@]}"; do
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
