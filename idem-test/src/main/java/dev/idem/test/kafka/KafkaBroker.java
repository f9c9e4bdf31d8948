package dev.idem.test.kafka;

import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * A real Kafka broker in KRaft mode (one combined broker and controller), running in the test JVM from Kafka's own
 * test kit, started once and shared by every test of the JVM, listening on 127.0.0.1. Tests of Kafka consumers and
 * transports talk to it over TCP, with no Kafka server installed. It needs {@code org.apache.kafka:kafka-clients} and
 * {@code org.apache.kafka:kafka-test-common-runtime} on the test classpath (optional dependencies of this kit).
 */
public final class KafkaBroker {
  private static KafkaClusterTestKit cluster;

  private KafkaBroker() {}

  /** The bootstrap servers of the shared broker, starting it on first use. */
  public static synchronized String bootstrapServers() {
    if (cluster == null) {
      try {
        KafkaClusterTestKit kit = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
            .setCombined(true)
            .setNumBrokerNodes(1)
            .setNumControllerNodes(1)
            .build())
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("offsets.topic.num.partitions", "4")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setConfigProp("auto.create.topics.enable", "false")
            .build();
        // the broker shares the test JVM: a fatal error of Kafka's must fail a test, not end the JVM with a status
        // that the test runner reports as a crashed fork
        Exit.setExitProcedure((status, message) -> refuseExit("exit", status, message));
        Exit.setHaltProcedure((status, message) -> refuseExit("halt", status, message));
        kit.format();
        kit.startup();
        kit.waitForReadyBrokers();
        cluster = kit;
        // stopped when the test session ends (KafkaBrokerSessionListener), before the JVM exits; the hook is for a
        // JVM that ends otherwise
        Runtime.getRuntime().addShutdownHook(new Thread(KafkaBroker::stop, "kafka-test-broker-stop"));
      } catch (Exception e) {
        throw new IllegalStateException("could not start the in-JVM Kafka broker", e);
      }
    }
    return cluster.bootstrapServers();
  }

  /** Stops the shared broker, if it runs. */
  public static synchronized void stop() {
    KafkaClusterTestKit kit = cluster;
    cluster = null;
    if (kit != null) {
      try {
        kit.close();
      } catch (Exception e) {
        System.err.println("the in-JVM Kafka broker did not close cleanly: " + e);
      }
    }
  }

  private static void refuseExit(String what, int status, String message) {
    String text = "Kafka asked to " + what + " the JVM with status " + status + ": " + message;
    System.err.println(text);
    throw new IllegalStateException(text);
  }

  /** A new admin client on the shared broker; the caller closes it. */
  public static Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    return Admin.create(p);
  }

  /** Creates {@code topic} with {@code partitions} partitions and waits until it is ready. */
  public static void createTopic(String topic, int partitions) {
    createTopic(topic, partitions, Map.of());
  }

  /** Creates {@code topic} with {@code partitions} partitions and topic settings, and waits until it is ready. */
  public static void createTopic(String topic, int partitions, Map<String, String> configs) {
    try (Admin admin = admin()) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all()
          .get(60, TimeUnit.SECONDS);
      Eventually.await("topic " + topic + " with a leader for each of its " + partitions + " partitions",
          Duration.ofSeconds(60), () -> describe(admin, topic),
          d -> d != null && d.partitions().size() == partitions
              && d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()));
    } catch (Exception e) {
      throw new IllegalStateException("could not create topic " + topic, e);
    }
  }

  private static TopicDescription describe(Admin admin, String topic) {
    try {
      return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
    } catch (Exception e) {
      return null; // not there yet
    }
  }

  /** The client settings that reach the shared broker ({@code bootstrap.servers}), for producers and consumers. */
  public static Map<String, Object> clientConfig() {
    return Map.of("bootstrap.servers", bootstrapServers());
  }
}
