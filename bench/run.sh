#!/usr/bin/env bash
# Side-by-side broker benchmark: Buslane against an embedded Apache Artemis 2.55.0, same client, same heap.
#
#   bench/run.sh            full run (3 rounds, 1,000,000-message workloads; under 20 minutes plus about 6 for
#                           workload 10, sessions at scale), rewrites the
#                           broker section of docs/benchmarks.md and docs/images/bench-*.png
#   bench/run.sh --quick    short run (one round, small counts; under 4 minutes once built); prints the RESULT
#                           lines and leaves the docs alone (add --docs to write them anyway)
#   bench/run.sh [--quick] --only 1,2  only some workloads (0 = client ceiling against a no-op sink)
#
#   bench/run.sh [--quick] --only 10   sessions at scale only (Buslane; docs/benchmarks.md#sessions-at-scale);
#                           BENCH_SESSION_PARTS=traffic,accept,idle,sdk picks its parts, BENCH_LARGE_HEAP the heap
#                           of its million-session brokers (default 6g)
#
# Extra JVM options for a broker: BENCH_BUSLANE_JVM_OPTS / BENCH_ARTEMIS_JVM_OPTS (e.g. a JFR recording).
# BENCH_BROKERS=buslane (or artemis) measures workloads 1 to 4 on one broker only, for quicker A/B runs.
# The build and the measurement both hold the shared lock /tmp/buslane-mvn.lock (no build runs during a
# measurement). Broker data goes to bench/target/broker-bench.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOCK=/tmp/buslane-mvn.lock
cd "$ROOT"

quick=0
write_docs=1
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --quick) quick=1; write_docs=0; args+=(--quick) ;;
    --docs) write_docs=1 ;;
    --only) args+=(--only "$2"); write_docs=0; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$write_docs" = 1 ] || args+=(--no-docs)

# shellcheck source=bench/build-bench.sh
. "$ROOT/bench/build-bench.sh"
build_bench 1200

CP="$ROOT/bench/target/classes:$(cat "$ROOT/bench/target/classpath.txt")"
BENCH_COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
BENCH_MEMORY="$(free -h | awk '/^Mem:/ {print $2}')"
BENCH_CPU="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) CPUs)"
mkdir -p "$ROOT/bench/target/broker-bench"
BENCH_DISK="$(df -T "$ROOT/bench/target/broker-bench" | awk 'NR==2 {print $2 " on " $1 " (" $7 ")"}')"
BENCH_COMMAND="bench/run.sh"
[ "$quick" = 1 ] && BENCH_COMMAND="$BENCH_COMMAND --quick"
export BENCH_COMMIT BENCH_MEMORY BENCH_CPU BENCH_DISK BENCH_COMMAND

echo "Running the broker benchmark (holding $LOCK) ..."
timeout 2400 flock "$LOCK" java -Xms512m -Xmx2g -Djava.awt.headless=true \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dio.netty.leakDetection.level=disabled -Dio.netty.allocator.type=unpooled -Dio.netty.noPreferDirect=true \
  -Dorg.slf4j.simpleLogger.log.org.apache.qpid.protonj2=error -Dorg.slf4j.simpleLogger.log.com.azure=error -cp "$CP" io.buslane.bench.broker.BrokerBench \
  --jar "$ROOT/buslane-server/target/buslane.jar" --work "$ROOT/bench/target/broker-bench" \
  --docs "$ROOT/docs/benchmarks.md" "${args[@]}"
