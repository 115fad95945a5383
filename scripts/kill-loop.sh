# Shared by sweep-kill.sh and experiment-kill.sh (sourced, not run): the
# work folders, the seeded kill moments, and the loop that starts a
# command, kills it with SIGKILL and starts it again.
#
# Environment: HGPSIM (the binary, default ./hgpsim), KILLS (default 5),
# SEED (seeds the kill moments; default: random, printed).
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

# kill_loop WHAT DIVISOR DONE CHECKPOINT CMD…: runs CMD --out "$ref" once
# uninterrupted, then KILLS times with --out "$killed", each killed after a
# moment uniform in [0.5 s, 1/DIVISOR of the uninterrupted wall time] (so
# that every attempt gets somewhere and the kills spread over the whole
# work), then once more to the end. DONE and CHECKPOINT are the paths,
# below an output folder, of a finished run's marker and of a checkpoint.
kill_loop() {
	local what=$1 div=$2 done_path=$3 cp_path=$4
	shift 4
	local start wall max_ms k delay_ms pid
	start=$(date +%s.%N)
	"$bin" "$@" --out "$ref" >/dev/null 2>"$work/uninterrupted.log"
	wall=$(echo "$(date +%s.%N) - $start" | bc)
	echo "uninterrupted $what: $(eval count "\"\$ref\"/$done_path") runs in ${wall%.*} s"
	max_ms=$(echo "$wall * 1000 / $div" | bc)
	echo "kill moments seeded with SEED=$seed"
	for k in $(seq 1 "$kills"); do
		delay_ms=$((500 + (RANDOM * 32768 + RANDOM) % (max_ms > 500 ? max_ms - 500 : 1)))
		"$bin" "$@" --out "$killed" >/dev/null 2>>"$work/killed.log" &
		pid=$!
		sleep "$(echo "scale=3; $delay_ms / 1000" | bc)"
		if kill -KILL "$pid" 2>/dev/null; then
			wait "$pid" 2>/dev/null || true
			echo "kill $k: SIGKILL after $delay_ms ms: $(eval count "\"\$killed\"/$done_path") runs finished, $(eval count "\"\$killed\"/$cp_path") with a checkpoint"
		else
			wait "$pid" || true
			echo "kill $k: the $what ended before $delay_ms ms"
		fi
	done
	"$bin" "$@" --out "$killed" >/dev/null 2>>"$work/killed.log"
}
