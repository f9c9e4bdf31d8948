package dev.idem.bench.outbox;

import java.io.InputStream;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A single-node KRaft Kafka broker for the Kafka benchmarks, in a JVM of its own so that its CPU time is not counted
 * as the consumer's. Prints {@code BOOTSTRAP <servers>} once it is ready and stops when its standard input closes
 * (when the benchmark that started it ends). Listens on 127.0.0.1 only.
 */
public final class KafkaBenchBroker {
  private KafkaBenchBroker() {}

  public static void main(String[] args) throws Exception {
    try (KafkaClusterTestKit cluster = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
        .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build())
        .setConfigProp("offsets.topic.replication.factor", "1")
        .setConfigProp("offsets.topic.num.partitions", "4")
        .setConfigProp("transaction.state.log.replication.factor", "1")
        .setConfigProp("transaction.state.log.min.isr", "1")
        .setConfigProp("group.initial.rebalance.delay.ms", "0")
        .setConfigProp("auto.create.topics.enable", "false")
        .build()) {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
      System.out.println("BOOTSTRAP " + cluster.bootstrapServers());
      System.out.flush();
      InputStream in = System.in;
      while (in.read() >= 0) {
        // wait for the parent to close our standard input
      }
    }
  }
}
