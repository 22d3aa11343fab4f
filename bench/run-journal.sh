#!/usr/bin/env bash
# Journal append+sync throughput against the raw FileChannel ceiling, measured in the same run.
#
#   bench/run-journal.sh                 build, run both benchmarks, print RESULT lines, regenerate the journal
#                                        section of docs/benchmarks.md
#   bench/run-journal.sh -prof jfr ...   same run with extra JMH options (e.g. a profiler); docs are NOT updated
#
# Both the build and the measurement hold the shared Maven lock, so no other build on the machine disturbs the
# figures. Benchmark files go to bench/target/bench-data (deleted after each iteration).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOCK=/tmp/buslane-mvn.lock
JAR="$ROOT/bench/target/benchmarks.jar"
DATA="$ROOT/bench/target/bench-data"
DOCS="$ROOT/docs/benchmarks.md"
cd "$ROOT"

# Offline once JMH is in the local repository (the first build has to fetch it).
# shellcheck source=bench/build-bench.sh
. "$ROOT/bench/build-bench.sh"
build_bench 900

mkdir -p "$DATA"
BENCH_NPROC="$(nproc)"
BENCH_MEMORY="$(free -h | awk '/^Mem:/ {print $2}')"
BENCH_JDK="$(java -version 2>&1 | head -n 2 | paste -sd ';' | sed 's/;/; /')"
BENCH_DISK="$(df -T "$DATA")"
BENCH_COMMIT="commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
export BENCH_NPROC BENCH_MEMORY BENCH_JDK BENCH_DISK BENCH_COMMIT

docs_property=()
if [ "$#" -eq 0 ]; then
  docs_property=("-Dbuslane.bench.docs=$DOCS")
else
  echo "Extra JMH options given ($*): $DOCS will not be updated."
fi

echo "Running the journal benchmarks (holding $LOCK) ..."
timeout 1800 flock "$LOCK" java "-Dbuslane.bench.dir=$DATA" ${docs_property[@]+"${docs_property[@]}"} \
  -cp "$JAR" io.buslane.bench.JournalBenchReport "$@"
