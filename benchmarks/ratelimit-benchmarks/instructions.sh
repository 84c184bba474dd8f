#!/usr/bin/env bash
# Redis instructions per decision, counted by callgrind: the benchmark's private redis-server runs under
# `valgrind --tool=callgrind`, and the Redis CPU cases (ScriptCost: the stores' script, Bucket4j and the
# two floors) are measured in instructions Redis executed during the
# calls, divided by the decisions: reading, parsing, running and answering every round trip. Unlike
# INFO commandstats microseconds, which move by +-30 % with the load of a shared machine, the counts
# repeat from run to run: the scripts are sent a clock of the run's own (20 ms per allowed decision,
# standing still for rejections, starting on the same hour in every run) and users drawn from a fixed
# seed, so what has left a window at each decision does not depend on how fast a loaded machine runs
# them; the server's timed background work
# (serverCron, counted per second of the run, not per decision) runs once a second (--hz 1), not ten
# times. Needs valgrind (callgrind_control included); takes about ten to twenty minutes.
# REDIS_SERVER_BIN names another redis-server to run (Debian's is stripped: one built from Redis's source
# with `make` keeps its functions' names, so the dumps show where a call's instructions go), and
# CALLGRIND_KEEP a folder to keep the dumps in (otherwise a temporary one, removed at the end): per case,
# five passes of one dump per contender the case has, in order: the script's calls, Bucket4j's, the call
# alone's and the commands alone's; read one with `callgrind_annotate --auto=no <dump>`.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in valgrind callgrind_control; do
  command -v "$tool" >/dev/null || { echo "instructions.sh: $tool not found" >&2; exit 1; }
done
server="${REDIS_SERVER_BIN:-$(command -v redis-server || true)}"
[ -n "$server" ] && [ -x "$server" ] || { echo "instructions.sh: redis-server not found (or REDIS_SERVER_BIN not executable)" >&2; exit 1; }
./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package -DskipTests
if [ -n "${CALLGRIND_KEEP:-}" ]; then
  mkdir -p "$CALLGRIND_KEEP"
  dir="$(cd "$CALLGRIND_KEEP" && pwd)"
else
  dir="$(mktemp -d)"
  trap 'rm -rf "$dir"' EXIT
fi
cat >"$dir/redis-server" <<WRAPPER
#!/usr/bin/env bash
exec valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" "$server" "\$@" --hz 1
WRAPPER
chmod +x "$dir/redis-server"
REDIS_SERVER="$dir/redis-server" CALLGRIND_DIR="$dir" java ${COST_ONLY:+"-Dratelimit.cost.only=$COST_ONLY"} -jar benchmarks/ratelimit-benchmarks/target/benchmarks.jar --instructions
