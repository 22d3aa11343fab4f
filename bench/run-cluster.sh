#!/usr/bin/env bash
# Cluster benchmark (issue #20): one, two and three Buslane nodes on one throwaway PostgreSQL 15 cluster (default
# durable settings), end-to-end AMQP load on six queues with the clients spread round-robin over every node (so most
# operations are carried to the serving node with two or three nodes), msgs/s and CPU per message of every process;
# then, on two nodes, one-at-a-time sends and receives through the node that serves a queue against the other node.
#
#   bench/run-cluster.sh            full run (100,000 messages per cluster size, 2,000 one-at-a-time operations per
#                                   case; under 10 minutes once built), rewrites the generated part of the
#                                   "Cluster mode" section of docs/benchmarks.md
#   bench/run-cluster.sh --quick    short run (20,000 messages, 300 operations; about 3 minutes); prints the
#                                   RESULT lines and leaves the docs alone (add --docs to write them)
#   --nodes 1,2,3                   the cluster sizes to run (another list leaves the docs alone)
#   --lease-seconds N               the nodes' lease (default 15, as the recorded table; before ec9d79b the default
#                                   5 of ./buslane made a node fence itself under this load, see benchmarks.md;
#                                   another value leaves the docs alone)
#
# Needs Debian's PostgreSQL 15 (/usr/lib/postgresql/15/bin), as bench/run-postgres.sh (bench/pg-bench.sh starts it
# in bench/target/cluster-bench/pg). The build and the measurement both hold the shared lock /tmp/buslane-mvn.lock
# (BENCH_SKIP_BUILD=1 skips the build). BENCH_BUSLANE_JVM_OPTS adds node JVM options (NAME: the node's name).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOCK=/tmp/buslane-mvn.lock
PGBIN="${PGBIN:-/usr/lib/postgresql/15/bin}"
cd "$ROOT"

quick=0
write_docs=1
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --quick) quick=1; write_docs=0; args+=(--quick) ;;
    --docs) write_docs=1 ;;
    --nodes) args+=(--nodes "$2"); write_docs=0; shift ;;
    --lease-seconds) args+=(--lease-seconds "$2"); [ "$2" = 15 ] || write_docs=0; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$write_docs" = 1 ] || args+=(--no-docs)

# shellcheck source=bench/pg-bench.sh
. "$ROOT/bench/pg-bench.sh"
BENCH_COMMAND="bench/run-cluster.sh"
[ "$quick" = 1 ] && BENCH_COMMAND="$BENCH_COMMAND --quick"
run_pg_bench "$ROOT/bench/target/cluster-bench" io.buslane.bench.postgres.ClusterBench 1200 "the cluster benchmark" \
  "${args[@]}"
