#!/usr/bin/env bash
# Sourced by the bench scripts: builds the broker jar and the bench module. It tries offline first (fast, and the
# usual case once a first build fetched everything) and falls back to a normal build when any bench dependency is
# missing from the local repository, rather than guessing from one artifact (issue #23: a machine with Artemis
# cached but not netty-bom 4.1.x failed the offline build).
# Usage: build_bench TIMEOUT_SECONDS [extra maven args...]; needs $LOCK.
build_bench() {
  local seconds="$1"
  shift
  echo "Building the broker jar and the bench module (mvn -Pbench -pl bench -am package -DskipTests $*) ..."
  if ! timeout "$seconds" flock "$LOCK" mvn -q -B -o -Pbench -pl bench -am package -DskipTests "$@"; then
    echo "The offline build failed (a dependency is not in the local repository): building online ..."
    timeout "$seconds" flock "$LOCK" mvn -q -B -Pbench -pl bench -am package -DskipTests "$@"
  fi
}
