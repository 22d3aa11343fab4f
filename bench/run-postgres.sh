#!/usr/bin/env bash
# PostgreSQL storage benchmark (issue #19): Buslane on PostgreSQL against Buslane on its file journal and against a
# hand-built SELECT ... FOR UPDATE SKIP LOCKED queue, on one machine and one throwaway PostgreSQL 15 cluster with
# its default durable settings (fsync on, synchronous_commit on); then the restart of a broker on PostgreSQL killed
# with kill -9 while holding a backlog, and the size of its table after many messages sent and completed.
#
#   bench/run-postgres.sh            full run (200,000 messages per throughput workload, a 1,000,000-message
#                                    backlog, the table-size run; under 25 minutes), rewrites the generated part of
#                                    the "PostgreSQL storage" section of docs/benchmarks.md
#   bench/run-postgres.sh --quick    short run (20,000 / 100,000 / 100,000 messages; under 4 minutes once built);
#                                    prints the RESULT lines and leaves the docs alone (add --docs to write them)
#   --table-messages N               messages of the table-size run (full run: 10,000,000)
#   --only pg,file,hand,recovery,table   some parts only (leaves the docs alone); BENCH_BUSLANE_JVM_OPTS adds
#                                    broker JVM options (NAME in them becomes the broker's name, e.g. for JFR)
#
# Needs Debian's PostgreSQL 15 (/usr/lib/postgresql/15/bin, package postgresql-15). The cluster lives in
# bench/target/postgres-bench/pg, runs as the postgres user (PostgreSQL refuses root) and is stopped on exit.
# The build and the measurement both hold the shared lock /tmp/buslane-mvn.lock (BENCH_SKIP_BUILD=1 skips the
# build and runs what bench/target and buslane-server/target hold).
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
    --table-messages) args+=(--table-messages "$2"); shift ;;
    --only) args+=(--only "$2"); write_docs=0; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$write_docs" = 1 ] || args+=(--no-docs)

# shellcheck source=bench/pg-bench.sh
. "$ROOT/bench/pg-bench.sh"
BENCH_COMMAND="bench/run-postgres.sh"
[ "$quick" = 1 ] && BENCH_COMMAND="$BENCH_COMMAND --quick"
run_pg_bench "$ROOT/bench/target/postgres-bench" io.buslane.bench.postgres.PostgresBench 1500 \
  "the PostgreSQL benchmark" "${args[@]}"
