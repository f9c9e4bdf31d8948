#!/usr/bin/env bash
# The outbox benchmarks (BENCHMARKS.md): relay throughput against a hand-written drain, the claim's plan on a large
# table, enqueue -> delivery latency, webhook signing, and the Kafka, RabbitMQ and NATS consumers with and without the
# inbox. Local PostgreSQL (and MariaDB for the plan); the Kafka benchmark starts its own broker in a second JVM on
# 127.0.0.1, the RabbitMQ and NATS ones use the local servers (127.0.0.1:5672 guest/guest, JetStream on 4222).
#
#   idem-bench/scripts/outbox-bench.sh [throughput|explain|latency|signing|kafka|rabbitmq|nats|consumers|all]
#   (default: all; consumers = kafka, rabbitmq and nats, one after the other)
#
# Database URL and user: -Didem.test.postgres.url=... -Didem.test.postgres.user=... in JAVA_OPTS, or edit the flags.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
jar="$root/idem-bench/target/benchmarks.jar"
what="${1:-all}"
if [ ! -f "$jar" ]; then
  mvn -q -B -f "$root/pom.xml" -pl idem-bench -am -DskipTests package >&2
fi
run() { java ${JAVA_OPTS:-} -cp "$jar" "$@"; }

case "$what" in throughput|all)
  # about 5-6 minutes on 2 shared cores
  run dev.idem.bench.outbox.RelayThroughputBench --events 100000 --events-by-batch 10:20000 --repeats 3 ;;
esac
case "$what" in explain|all)
  run dev.idem.bench.outbox.RelayThroughputBench --matrix false --explain-rows 1000000 --explain-mariadb true
  run dev.idem.bench.outbox.RelayThroughputBench --matrix false --explain-rows 1000000 --explain-pending 10000 ;;
esac
case "$what" in latency|all)
  run dev.idem.bench.outbox.RelayLatencyBench --variants 10,50,50+wake
  run dev.idem.bench.outbox.RelayLatencyBench --variants 10,50,50+wake --producers 4 ;;
esac
case "$what" in signing|all)
  run dev.idem.bench.outbox.WebhookSigningBenchmark -wi 2 -i 3 -f 1 -w 2s -r 2s -prof gc ;;
esac
case "$what" in kafka|consumers|all)
  # about 8 minutes on 2 shared cores
  run dev.idem.bench.outbox.KafkaInboxBench --events 100000 --repeats 3 ;;
esac
case "$what" in rabbitmq|consumers|all)
  # about 4 minutes on 2 shared cores
  run dev.idem.bench.outbox.RabbitMqInboxBench --events 20000 --repeats 5 ;;
esac
case "$what" in nats|consumers|all)
  # about 4 minutes on 2 shared cores
  run dev.idem.bench.outbox.NatsInboxBench --events 20000 --repeats 5 ;;
esac
