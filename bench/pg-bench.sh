#!/usr/bin/env bash
# Sourced by bench/run-postgres.sh and bench/run-cluster.sh. start_bench_pg: a throwaway PostgreSQL 15 cluster with
# its default durable settings (fsync on, synchronous_commit on) in $1/pg, run as the postgres user (PostgreSQL
# refuses root), on 127.0.0.1 and a free port, with pg_stat_statements preloaded; stopped on exit. Sets PGDIR and PGPORT, and the
# BENCH_* description of the machine the reports print (BENCH_COMMAND is the caller's).
# Usage: start_bench_pg WORK_DIR; needs $PGBIN and $ROOT.
as_pg() { runuser -u postgres -- "$@"; }
stop_pg() {
  if [ -f "$PGDIR/data/postmaster.pid" ]; then
    as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null || true
  fi
}
start_bench_pg() {
  local work="$1"
  [ -x "$PGBIN/initdb" ] || { echo "PostgreSQL 15 not found in $PGBIN (apt-get install postgresql-15)" >&2; exit 1; }
  PGDIR="$work/pg"
  # A cluster left over by an interrupted run is stopped first; then a fresh one.
  stop_pg
  rm -rf "$work"
  mkdir -p "$PGDIR"
  chown postgres "$PGDIR"
  PGPORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  as_pg "$PGBIN/initdb" -D "$PGDIR/data" -U buslane --auth=trust -E UTF8 >"$work/initdb.log"
  trap stop_pg EXIT
  as_pg "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/log" -w start \
    -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements" >/dev/null
  echo "PostgreSQL 15 on 127.0.0.1:$PGPORT (data in $PGDIR/data, default durable settings)"
  BENCH_COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  BENCH_MEMORY="$(free -h | awk '/^Mem:/ {print $2}')"
  BENCH_CPU="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) CPUs)"
  BENCH_DISK="$(df -T "$work" | awk 'NR==2 {print $2 " on " $1 " (" $7 ")"}')"
  export BENCH_COMMIT BENCH_MEMORY BENCH_CPU BENCH_DISK
}

# Builds the broker jar and the bench module (unless BENCH_SKIP_BUILD=1), starts the PostgreSQL of start_bench_pg in
# WORK/pg, then runs MAIN (a bench main of the postgres package) on it holding the build lock, within TIMEOUT
# seconds, with the common options and ARGS. Usage: run_pg_bench WORK MAIN TIMEOUT LABEL ARGS...; needs $ROOT,
# $LOCK, $PGBIN and an exported BENCH_COMMAND.
run_pg_bench() {
  local work="$1" main="$2" timeout_s="$3" label="$4"
  shift 4
  # shellcheck source=bench/build-bench.sh
  . "$ROOT/bench/build-bench.sh"
  if [ "${BENCH_SKIP_BUILD:-0}" = 1 ]; then
    echo "BENCH_SKIP_BUILD=1: using the broker jar and bench classes as they are"
  else
    build_bench 1200 -DskipFuzz
  fi
  start_bench_pg "$work"
  export BENCH_COMMAND
  local cp
  cp="$ROOT/bench/target/classes:$(cat "$ROOT/bench/target/classpath.txt")"
  echo "Running $label (holding $LOCK) ..."
  timeout "$timeout_s" flock "$LOCK" java -Xms512m -Xmx2g -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dio.netty.leakDetection.level=disabled \
    -Dio.netty.allocator.type=unpooled -Dio.netty.noPreferDirect=true \
    -Dorg.slf4j.simpleLogger.log.org.apache.qpid.protonj2=error -cp "$cp" "$main" \
    --jar "$ROOT/buslane-server/target/buslane.jar" --work "$work" --pg-port "$PGPORT" --pg-data "$PGDIR/data" \
    --docs "$ROOT/docs/benchmarks.md" "$@"
}
