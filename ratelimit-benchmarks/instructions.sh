#!/usr/bin/env bash
# Redis instructions per decision of the sliding-window script, counted by callgrind: a private
# redis-server runs under `valgrind --tool=callgrind`, redis-benchmark (one client) sends the stores'
# EVALSHA with the stores' argument layout, and the instructions Redis executed during the measured
# calls (callgrind's totals after zeroing, i.e. reading, parsing, running and answering each call) are
# divided by the calls. Unlike INFO commandstats microseconds, which move by +-30 % with the load of a
# shared machine, these counts repeat to within a fraction of a percent from run to run.
#
# Columns: the script before round two (sliding_window_before.lua), the script the stores run, and two
# floors with the same keys and arguments: the script call alone (floor_call.lua, no command) and, for
# allowed decisions in exact request windows, the exact log's commands alone (floor_commands.lua).
#
# Usage: ratelimit-benchmarks/instructions.sh [CALLS]   (default 3000 measured calls per figure, after
# as many warm-up calls over the same 300 users). Needs valgrind, redis-server, redis-cli and
# redis-benchmark; takes about two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-3000}"
for tool in valgrind callgrind_control redis-server redis-cli redis-benchmark; do
  command -v "$tool" >/dev/null || { echo "instructions.sh: $tool not found" >&2; exit 1; }
done

dir="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
while redis-cli -p "$port" PING >/dev/null 2>&1; do port=$((port + 1)); done
valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" >"$dir/valgrind.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.2; done

cli() { redis-cli -p "$port" "$@"; }
resources=ratelimit-benchmarks/src/main/resources/dev/ratelimit/benchmarks
declare -A sha
sha[before]=$(cli SCRIPT LOAD "$(cat "$resources/sliding_window_before.lua")")
sha[now]=$(cli SCRIPT LOAD "$(cat ratelimit-redis-common/src/main/resources/dev/ratelimit/redis/sliding_window.lua)")
sha[call]=$(cli SCRIPT LOAD "$(cat "$resources/floor_call.lua")")
sha[commands]=$(cli SCRIPT LOAD "$(cat "$resources/floor_commands.lua")")

# newest: instructions per call in the dump just written (each figure runs in a subshell: no counter)
newest() {
  local file
  file=$(ls -t "$dir"/callgrind.out.* | head -1)
  awk -v n="$calls" '/^totals:/ {printf "%.0f", $2 / n}' "$file"
}
# measure SCRIPT PREFIX NKEYS ARGS...: warm-up calls, then the measured calls; prints instructions per call
measure() {
  local script=$1 prefix=$2 nkeys=$3
  shift 3
  local keys=() i
  for ((i = 0; i < nkeys; i++)); do keys+=("ratelimit:{$prefix-$script-__rand_int__}:$i"); done
  redis-benchmark -p "$port" -c 1 -n "$calls" -r 300 -q EVALSHA "${sha[$script]}" "$nkeys" "${keys[@]}" "$@" >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" -c 1 -n "$calls" -r 300 -q EVALSHA "${sha[$script]}" "$nkeys" "${keys[@]}" "$@" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1
  newest
}
# rejected SCRIPT PREFIX WINDOW...: one user whose window (limit 10) is full, asked again and again
rejected() {
  local script=$1 key="ratelimit:{$2-$1}:0" i
  shift 2
  for i in $(seq 1 10); do cli EVALSHA "${sha[now]}" 1 "$key" r "" "fill-$i" 0 "" "" "$@" >/dev/null; done
  redis-benchmark -p "$port" -c 1 -n "$calls" -q EVALSHA "${sha[$script]}" 1 "$key" "${head[@]}" "$@" >/dev/null
  callgrind_control -z "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" -c 1 -n "$calls" -q EVALSHA "${sha[$script]}" 1 "$key" "${head[@]}" "$@" >/dev/null
  callgrind_control -d "$pid" >/dev/null 2>&1
  newest
}

head=(r "" "m__rand_int__-__rand_int__" 0 "" "")
minute=(60000 1000000000 0 0)
day=(86400000 1000000000 0 0)
day_at_minute=(86400000 1000000000 0 60000)
echo "| Decision | Windows | Script before | Script now | Floor: the call alone | Floor: the commands alone |"
echo "|---|---|---:|---:|---:|---:|"
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }
row allowed "1 exact (minute)" \
  "$(measure before a1 1 "${head[@]}" "${minute[@]}")" "$(measure now a1 1 "${head[@]}" "${minute[@]}")" \
  "$(measure call a1 1 "${head[@]}" "${minute[@]}")" "$(measure commands a1 1 "${head[@]}" "${minute[@]}")"
row allowed "2 exact (minute + day)" \
  "$(measure before a2 2 "${head[@]}" "${minute[@]}" "${day[@]}")" \
  "$(measure now a2 2 "${head[@]}" "${minute[@]}" "${day[@]}")" \
  "$(measure call a2 2 "${head[@]}" "${minute[@]}" "${day[@]}")" \
  "$(measure commands a2 2 "${head[@]}" "${minute[@]}" "${day[@]}")"
row allowed "1 precision (day @ 1 min)" \
  "$(measure before p1 1 "${head[@]}" "${day_at_minute[@]}")" "$(measure now p1 1 "${head[@]}" "${day_at_minute[@]}")" \
  "$(measure call p1 1 "${head[@]}" "${day_at_minute[@]}")" "-"
full=(60000 10 0 0)
row "rejected (window full)" "1 exact (minute)" \
  "$(rejected before r1 "${full[@]}")" "$(rejected now r1 "${full[@]}")" "$(rejected call r1 "${full[@]}")" "-"
echo
echo "Redis instructions per decision (callgrind, $calls measured calls per figure, redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'))."
