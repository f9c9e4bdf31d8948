package dev.idem.bench.outbox;

import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.core.UuidV7;
import dev.idem.kafka.KafkaTransport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A single-node KRaft Kafka broker for the Kafka benchmarks, in a JVM of its own so that its CPU time is not counted
 * as the consumer's. Prints {@code BOOTSTRAP <servers>} once it is ready and stops when its standard input closes
 * (when the benchmark that started it ends). Listens on 127.0.0.1 only. A benchmark starts it with {@link #start}.
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

  /** {@link #start(List)} on this JVM's class path: {@code -cp <java.class.path> KafkaBenchBroker}. */
  public static Running start() throws IOException {
    return start(List.of("-cp", System.getProperty("java.class.path"), KafkaBenchBroker.class.getName()));
  }

  /**
   * Starts the broker in a child JVM, {@code java -Xmx1g <launch>}, where {@code launch} names the class path and the
   * main class that runs {@link #main} (a jar's launcher may come between), and waits until it is ready. Its log goes
   * to {@code idem-kafka-bench-broker.log} in {@code java.io.tmpdir}.
   */
  public static Running start(List<String> launch) throws IOException {
    Path log = Path.of(System.getProperty("java.io.tmpdir"), "idem-kafka-bench-broker.log");
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx1g"));
    command.addAll(launch);
    Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("BOOTSTRAP ")) {
        return new Running(process, line.substring("BOOTSTRAP ".length()).trim());
      }
    }
    process.destroyForcibly();
    throw new IllegalStateException("the Kafka broker ended before it was ready; see its log, " + log);
  }

  /** The broker started by {@link #start}, seen from the benchmark; closing stops it. */
  public static final class Running implements AutoCloseable {
    private final Process process;
    private final String bootstrap;

    private Running(Process process, String bootstrap) {
      this.process = process;
      this.bootstrap = bootstrap;
    }

    /** Its {@code bootstrap.servers}. */
    public String bootstrap() {
      return bootstrap;
    }

    /** The broker's CPU ticks so far, from {@code /proc}. */
    public long cpuTicks() {
      return Cpu.processTicks(process.pid());
    }

    /** Creates topics of {@code partitions} partitions, one replica. */
    public void createTopics(List<String> topics, int partitions) throws Exception {
      try (Admin a = admin()) {
        for (String topic : topics) {
          a.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
      }
    }

    /** The sum of the offsets consumer group {@code group} committed, over its partitions. */
    public long committedOffsets(String group) throws Exception {
      try (Admin a = admin()) {
        return a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS).values()
            .stream().mapToLong(OffsetAndMetadata::offset).sum();
      }
    }

    private Admin admin() {
      Properties admin = new Properties();
      admin.put("bootstrap.servers", bootstrap);
      return Admin.create(admin);
    }

    /**
     * Publishes {@code count} records to {@code topic} ({@code acks=all}): about 256 B of JSON, a key of 1,000, and
     * the {@code idem-event-id} header, a UUIDv7 as {@link KafkaTransport} sends the outbox's ids, or with
     * {@code timeOrderedIds} false a random UUID, as a foreign producer might.
     */
    public void publish(String topic, int count, boolean timeOrderedIds) {
      Map<String, Object> config = new HashMap<>();
      config.put("bootstrap.servers", bootstrap);
      config.put("key.serializer", StringSerializer.class.getName());
      config.put("value.serializer", ByteArraySerializer.class.getName());
      config.put("acks", "all");
      config.put("linger.ms", "5");
      String pad = "x".repeat(200);
      try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config)) {
        for (int i = 0; i < count; i++) {
          RecordHeaders headers = new RecordHeaders();
          UUID id = timeOrderedIds ? UuidV7.next() : UUID.randomUUID();
          headers.add(KafkaTransport.EVENT_ID_HEADER, id.toString().getBytes(StandardCharsets.UTF_8));
          byte[] value = ("{\"n\":" + i + ",\"pad\":\"" + pad + "\"}").getBytes(StandardCharsets.UTF_8);
          producer.send(new ProducerRecord<>(topic, null, "agg-" + (i % 1000), value, headers));
        }
        producer.flush();
      }
    }

    @Override
    public void close() throws Exception {
      process.getOutputStream().close();
      process.waitFor(30, TimeUnit.SECONDS);
      process.destroyForcibly();
    }
  }
}
