#!/usr/bin/env bash
# Where one broker's CPU goes during the measured windows of some workloads, by layer (proton-j, Netty/Vert.x, the
# broker's own code, the kernel, JIT, GC): a system-wide perf recording taken while bench/run.sh measures that
# broker alone, attributed by bench/perf-layers.py. Needs Linux perf (Debian: linux-perf) and permission to record
# system-wide (root, or kernel.perf_event_paranoid <= -1). Not part of any test run; the figures move the run.
#
#   bench/profile.sh buslane 1,2,4     Buslane's layers in workloads 1, 2 and 4 (3 rounds; about 6 minutes)
#   bench/profile.sh artemis 4         the same for Apache Artemis
#
# Output: the layer table per workload (share of the broker's CPU in its windows, and µs per message from the
# run's median cpu_us_per_msg). The recording and the run's log stay in bench/target/profile/.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
broker="${1:?usage: bench/profile.sh buslane|artemis WORKLOADS}"
only="${2:?usage: bench/profile.sh buslane|artemis WORKLOADS}"
# Java frames need the JIT's symbol map (/tmp/perf-<pid>.map, written at exit) and frame pointers to unwind
perf_opts="-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer"
case "$broker" in
  buslane) export BENCH_BUSLANE_JVM_OPTS="${BENCH_BUSLANE_JVM_OPTS:-} $perf_opts" ;;
  artemis) export BENCH_ARTEMIS_JVM_OPTS="${BENCH_ARTEMIS_JVM_OPTS:-} $perf_opts" ;;
  *) echo "unknown broker: $broker (buslane or artemis)" >&2; exit 2 ;;
esac
command -v perf >/dev/null || { echo "perf is not installed (Debian: apt-get install linux-perf)" >&2; exit 2; }

out="$ROOT/bench/target/profile"
mkdir -p "$out"
data="$out/perf-$broker.data"
log="$out/run-$broker.log"

perf record -a -g -F 999 -k CLOCK_MONOTONIC -o "$data" >/dev/null 2>"$out/perf-record.err" &
perf_pid=$!
trap 'kill -INT "$perf_pid" 2>/dev/null || true' EXIT
sleep 1
BENCH_BROKERS="$broker" "$ROOT/bench/run.sh" --only "$only" | tee "$log"
kill -INT "$perf_pid"
wait "$perf_pid" || true
trap - EXIT

echo
echo "== $broker: CPU in the measured windows by layer (perf samples at 999 Hz, broker process only)"
python3 "$ROOT/bench/perf-layers.py" "$data" "$log"
