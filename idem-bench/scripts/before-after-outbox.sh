#!/bin/bash
# Runs the relay throughput and Kafka inbox benchmarks of two builds side by side, alternating them, every invocation
# in its own JVM: before-after-outbox.sh OLD_JAR NEW_JAR OUT_DIR. Build each jar in a worktree of its commit with
#   mvn -B -q -pl idem-bench -am package -Dmaven.test.skip=true
set -eu
OLD=$1
NEW=$2
OUT=$3
mkdir -p "$OUT/tmp"
run() { # name jar class args...
  local name=$1 jar=$2 cls=$3; shift 3
  { echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) :: java -cp $jar dev.idem.bench.outbox.$cls $*";
    timeout 600 java -Djava.io.tmpdir="$OUT/tmp" -cp "$jar" dev.idem.bench.outbox.$cls "$@";
    echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) rc=$?"; } > "$OUT/$name.txt" 2>&1 || true
  echo "$name done $(date -u +%T)" >> "$OUT/progress.log"
}
TP="--events 50000 --batches 100 --modes mark,delete --threads 1,4 --repeats 1"
KF="--events 50000 --repeats 1 --one-by-one false"
run tp1-old $OLD RelayThroughputBench $TP
run tp2-new $NEW RelayThroughputBench $TP
run tp3-new $NEW RelayThroughputBench $TP
run tp4-old $OLD RelayThroughputBench $TP
run tp5-old $OLD RelayThroughputBench $TP
run tp6-new $NEW RelayThroughputBench $TP
run kf1-new $NEW KafkaInboxBench $KF
run kf2-old $OLD KafkaInboxBench $KF
run kf3-old $OLD KafkaInboxBench $KF
run kf4-new $NEW KafkaInboxBench $KF
echo ALL DONE >> "$OUT/progress.log"
