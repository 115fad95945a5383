#!/usr/bin/env bash
# Measures runs with their clients over 0 (in process), 1, 2 and 3 worker
# processes on this machine, for docs/distributed.md: wall time, rounds/s,
# protobuf bytes per round through the supervisor (steps out, acks in; and
# of those, the control: all but the clients' stats and results) and
# between the workers, and the peak memory (VmHWM) of the supervisor and
# of each worker. Checks that metrics.jsonl is the same in every case.
# Usage:
#   go build -o hgpsim . && scripts/workers-bench.sh SCENARIO... (default scenarios/distributed/n100.yaml)
# BINS="./hgpsim /tmp/hgpsim-other" compares builds: each case runs once
# per binary, one after the other, so that both see the same load (a
# binary's workers are its own: a worker refuses another build).
set -euo pipefail
read -r -a bins <<< "${BINS:-./hgpsim}"
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- scenarios/distributed/n100.yaml
# A secret for this script's workers and runs (they inherit it).
export HGPSIM_WORKER_SECRET="bench-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '| binary | scenario | workers | wall (s) | rounds/s | supervisor MB/round | control KB/round | peer MB/round | supervisor peak MB | worker peak MB |\n|---|---|---|---|---|---|---|---|---|---|\n'
for sc in "$@"; do
  rounds=$(awk -F'rounds: ' '/^sgp:/ {split($2, a, ","); print a[1]}' "$sc")
  for k in 0 1 2 3; do
    for b in "${!bins[@]}"; do
      hg=$(realpath "${bins[$b]}")
      addrs=()
      pids=()
      for w in $(seq 1 $k); do
        "$hg" worker --listen 127.0.0.1:0 --data-root "$PWD" > "$tmp/w$w.out" 2>&1 &
        pids+=($!)
      done
      for w in $(seq 1 $k); do
        for _ in $(seq 100); do grep -q listening "$tmp/w$w.out" && break; sleep 0.1; done
        addrs+=("$(awk '/listening/ {print $NF}' "$tmp/w$w.out")")
      done
      flags=()
      [ $k -eq 0 ] || flags=(--workers "$(IFS=,; echo "${addrs[*]}")")
      out="$tmp/run$b-$k"
      rm -rf "$out"
      /usr/bin/time -f '%e %M' -o "$tmp/time" "$hg" run "$sc" --out "$out" "${flags[@]}" 2>/dev/null
      read -r wall rss < "$tmp/time"
      wpeak=""
      for p in "${pids[@]}"; do
        wpeak+="$(awk '/VmHWM/ {printf "%d ", $2/1024}' "/proc/$p/status")"
      done
      sup=- ctl=- peer=-
      if [ $k -gt 0 ]; then
        sup=$(jq -r "(.wire.step_bytes + .wire.ack_bytes) / .wire.rounds / 1e6 | . * 1000 | round / 1000" "$out/summary.json")
        ctl=$(jq -r "if .wire.report_bytes == null then \"-\" else (.wire.step_bytes + .wire.ack_bytes - .wire.report_bytes) / .wire.rounds / 1e3 | . * 100 | round / 100 end" "$out/summary.json")
        peer=$(jq -r "if .wire.peer_bytes == null then \"-\" else .wire.peer_bytes / .wire.rounds / 1e6 | . * 100 | round / 100 end" "$out/summary.json")
      fi
      cmp "$tmp/run0-0/metrics.jsonl" "$out/metrics.jsonl"
      rps=$(awk -v r="$rounds" -v w="$wall" 'BEGIN {printf "%.1f", r / w}')
      printf '| %s | %s | %d | %s | %s | %s | %s | %s | %d | %s |\n' "$(basename "${bins[$b]}")" "$(basename "$sc" .yaml)" $k "$wall" "$rps" "$sup" "$ctl" "$peer" $((rss / 1024)) "${wpeak:--}"
      [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}"
      wait 2>/dev/null || true
    done
  done
done
