#!/usr/bin/env bash
# Purge of 10,000,000 expired records while claims run at full rate: the partitioned PostgreSQL store (purge drops
# partitions) against the unpartitioned one (purge deletes rows in batches), alternating, two passes each
# (BENCHMARKS.md). Creates and drops its own database, idem_bench_partition, on the local PostgreSQL. About 25 minutes
# on 2 shared cores: the row-by-row purge is bounded to a 120 s window and its total extrapolated from its rate.
#
#   idem-bench/scripts/partition-purge.sh [--rows 10000000] [--threads 8] [--seconds 10] [--window 120] [--passes 2] [--width P7D]
#
# Without idem-bench/target/benchmarks.jar (it needs JMH from Maven Central), compiles the one class against the
# reactor's idem-core and idem-jdbc classes and the local Maven repository.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="$root/idem-bench/target/benchmarks.jar"
main=dev.idem.bench.db.PartitionPurgeBench
defaults=(--rows 10000000 --threads 8 --seconds 10 --window 120 --passes 2 --width P7D)
if [ -f "$jar" ]; then
  exec java ${JAVA_OPTS:-} -cp "$jar" "$main" "${defaults[@]}" "$@"
fi
m2="${MAVEN_REPO:-$HOME/.m2/repository}"
[ -d "$root/idem-jdbc/target/classes" ] || mvn -q -B -o -f "$root/pom.xml" -pl idem-jdbc -am -DskipTests package >&2
cp="$root/idem-core/target/classes:$root/idem-jdbc/target/classes"
cp="$cp:$m2/com/zaxxer/HikariCP/6.2.1/HikariCP-6.2.1.jar:$m2/org/postgresql/postgresql/42.7.13/postgresql-42.7.13.jar"
cp="$cp:$m2/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar:$(ls "$m2"/org/slf4j/slf4j-api/*/slf4j-api-*.jar | sort -V | tail -1)"
out="$(mktemp -d)"
javac -d "$out" -cp "$cp" "$root/idem-bench/src/main/java/dev/idem/bench/db/PartitionPurgeBench.java"
exec java ${JAVA_OPTS:-} -cp "$out:$cp" "$main" "${defaults[@]}" "$@"
