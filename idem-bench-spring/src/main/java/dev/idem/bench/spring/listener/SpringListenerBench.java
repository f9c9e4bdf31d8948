package dev.idem.bench.spring.listener;

import dev.idem.bench.outbox.BenchSupport;
import dev.idem.bench.outbox.ConsumerComparison;
import dev.idem.bench.outbox.ConsumerComparison.LastCommit;
import dev.idem.bench.outbox.ConsumerComparison.Sizes;
import dev.idem.bench.outbox.InboxTables;
import dev.idem.bench.outbox.KafkaBenchBroker;
import dev.idem.bench.outbox.RabbitMqInboxBench;
import dev.idem.bench.spring.BenchMain;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.jar.JarFile;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.Lifecycle;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * Throughput of Spring's listener containers with and without {@code @IdempotentListener}, per broker, side by side
 * in one run, by the method of the consumer benchmarks of {@code idem-bench} ({@link ConsumerComparison}).
 *
 * <p>One Spring Boot application per broker, on a pool of two PostgreSQL connections ({@link InboxTables}: an effect
 * table and the inbox table, each holding {@code --prefill} rows from the start, analysed), holds the listener
 * methods of {@link BenchListeners}, per broker two that differ only by {@code @IdempotentListener}:
 * {@code baseline}, a {@code @Transactional} method (the data source's transaction manager) that inserts one row
 * per message into the effect table, and {@code idem}, the same method through the starter's inbox (the inbox row
 * and the effect in one transaction). The containers keep Spring's defaults: one consumer; RabbitMQ acknowledge
 * mode {@code AUTO}, prefetch 250; Kafka ack mode {@code BATCH} ({@code --ack-mode record} for {@code RECORD}),
 * {@code max.poll.records} 500.
 *
 * <p>Before every measurement, outside the clock, the rows earlier runs added to both tables are deleted (and the
 * tables vacuumed), and {@code --messages} messages are published (256 B JSON with a fresh UUIDv7 id: the AMQP
 * {@code message-id}, persistent, to a durable queue, with confirms; the Kafka {@code idem-event-id} header, to the
 * variant's topic of one partition, {@code acks=all}). The clock runs from starting the variant's container to the
 * commit of the last message's transaction (a transaction synchronization of the method); then the container is
 * stopped and the queue checked empty, or the group's offset checked at the end of the topic. A run that has not
 * finished within {@code --timeout} seconds fails the benchmark. One priming run of each variant is discarded; the
 * repeats alternate the order. CPU per message is read from {@code /proc}: this JVM, the PostgreSQL backends of the
 * pool, and the broker (RabbitMQ's {@code beam.smp}; Kafka's own JVM, {@link KafkaBenchBroker}).
 *
 * <pre>
 * java -jar idem-bench-spring/target/bench-spring.jar dev.idem.bench.spring.listener.SpringListenerBench
 *     [--broker rabbit|kafka|both] [--messages 20000] [--repeats 5] [--prefill 100000] [--prefetch 250]
 *     [--batch 500] [--ack-mode batch|record] [--timeout 600] [--url jdbc:postgresql://127.0.0.1:5432/test]
 *     [--user postgres] [--uri amqp://guest:guest@127.0.0.1:5672] [--synchronous-commit on] [--profile false]
 * </pre>
 */
public final class SpringListenerBench implements ConsumerComparison.Consumers {
  private static final List<String> VARIANTS = List.of(ConsumerComparison.BASELINE, "idem");

  private final Broker broker;
  private final ConfigurableApplicationContext context;
  private final BenchListeners.Effects effects;
  private final Duration timeout;

  private SpringListenerBench(Broker broker, ConfigurableApplicationContext context, BenchListeners.Effects effects,
      Duration timeout) {
    this.broker = broker;
    this.context = context;
    this.effects = effects;
    this.timeout = timeout;
  }

  /** The application of one broker: Spring Boot's auto-configuration, the starter's included, and its listeners. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  /** Runs the benchmark with the flags above; prints each broker's table, then both side by side. */
  public static void main(String[] args) throws Exception {
    Map<String, String> f = new LinkedHashMap<>(BenchSupport.flags(args));
    f.put("events", f.getOrDefault("messages", f.getOrDefault("events", "20000")));
    f.putIfAbsent("repeats", "5");
    Sizes sizes = Sizes.of(f, "prefetch", 250);
    String which = f.getOrDefault("broker", "both");
    if (!List.of("rabbit", "kafka", "both").contains(which)) {
      throw new IllegalArgumentException("--broker must be rabbit, kafka or both, got " + which);
    }
    Duration timeout = Duration.ofSeconds(Long.parseLong(f.getOrDefault("timeout", "600")));
    List<String> table = new ArrayList<>();
    for (String name : which.equals("both") ? List.of("rabbit", "kafka") : List.of(which)) {
      // the clients' configuration dumps before the application starts (and after it closed) are no part of the table
      LoggingSystem.get(SpringListenerBench.class.getClassLoader()).setLogLevel(LoggingSystem.ROOT_LOGGER_NAME,
          LogLevel.WARN);
      try (Broker broker = Broker.open(name, f)) {
        System.out.println(BenchSupport.fmt("%nSpring listener benchmark, %s: %d messages, %d repeats, prefill %d,"
            + " %s, load %s", broker.title(), sizes.events(), sizes.repeats(), sizes.prefill(), broker.settings(),
            BenchSupport.loadAverage()));
        List<String> rows = measure(broker, sizes, timeout);
        for (int i = table.isEmpty() ? 0 : 2; i < rows.size(); i++) {
          table.add((i == 0 ? "| broker " : i == 1 ? "| --- " : "| " + broker.title() + " ") + rows.get(i));
        }
      }
    }
    if (which.equals("both") && !table.isEmpty()) {
      System.out.println();
      table.forEach(System.out::println);
    }
  }

  /** Measures both variants in the broker's application; returns the table's rows. */
  private static List<String> measure(Broker broker, Sizes sizes, Duration timeout) throws Exception {
    return withApplication(broker, timeout, bench -> broker.comparison().measure(bench, List.of("per-record"),
        VARIANTS, sizes.repeats()));
  }

  /** What runs in a broker's application. */
  interface InApplication<T> {
    T run(SpringListenerBench bench) throws Exception;
  }

  /** Starts the broker's application, runs {@code body} in it, closes the application. */
  static <T> T withApplication(Broker broker, Duration timeout, InApplication<T> body) throws Exception {
    InboxTables tables = broker.comparison().tables();
    BenchListeners.Effects effects = new BenchListeners.Effects(tables.dataSource(), tables.effectInsert());
    List<String> properties = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.main.banner-mode=off", "--logging.level.root=WARN",
        "--idem.outbox.inbox-table=" + tables.inboxTable(), "--idem.outbox.table=" + tables.inboxTable() + "_ob",
        "--idem.outbox.purge.enabled=false", "--idem.outbox.relay.enabled=false"));
    properties.addAll(broker.properties());
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class, BenchListeners.class)
        .initializers(c -> {
          c.getBeanFactory().registerSingleton("dataSource", tables.dataSource());
          c.getBeanFactory().registerSingleton("benchEffects", effects);
        }).run(properties.toArray(String[]::new))) {
      return body.run(new SpringListenerBench(broker, context, effects, timeout));
    }
  }

  @Override
  public void prepare(String variant, String style) throws Exception {
    broker.comparison().tables().removeRunRows();
    broker.publish(variant);
  }

  @Override
  public long consume(String variant, String style) throws Exception {
    LastCommit last = new LastCommit(broker.comparison().events());
    effects.measure(last);
    Lifecycle container = broker.container(context, BenchListeners.containerId(broker.name(), variant));
    long end;
    try {
      container.start();
      end = last.await(timeout, "the " + broker.title() + " listener " + variant);
    } finally {
      container.stop();
      effects.measure(null);
    }
    broker.requireConsumed(variant);
    return end;
  }

  /** One broker's side of the benchmark: its messages, its listeners, its application's properties. */
  interface Broker extends AutoCloseable {
    /** Opens {@code rabbit} or {@code kafka} with the flags: its tables, its queue or topics (Kafka: its broker). */
    static Broker open(String name, Map<String, String> flags) throws Exception {
      return name.equals("rabbit") ? RabbitBroker.open(flags) : KafkaBroker.open(flags);
    }

    /** {@code rabbit} or {@code kafka}, as in the container ids. */
    String name();

    String title();

    /** Its settings, for the header. */
    String settings();

    ConsumerComparison comparison();

    List<String> properties();

    /** Publishes one measurement's messages for {@code variant}. */
    void publish(String variant) throws Exception;

    /** Fails when the broker holds messages of {@code variant}'s measurement not consumed. */
    void requireConsumed(String variant) throws Exception;

    Lifecycle container(ConfigurableApplicationContext context, String id);
  }

  /** RabbitMQ: the queue, its messages and the tables of {@link RabbitMqInboxBench}, shared by both variants. */
  private record RabbitBroker(RabbitMqInboxBench rabbit, String prefetch) implements Broker {
    static RabbitBroker open(Map<String, String> f) throws Exception {
      return new RabbitBroker(RabbitMqInboxBench.open(f), f.getOrDefault("prefetch", "250"));
    }

    @Override
    public String name() {
      return "rabbit";
    }

    @Override
    public String title() {
      return "RabbitMQ";
    }

    @Override
    public String settings() {
      return "acknowledge mode AUTO, prefetch " + prefetch + ", queue " + rabbit.queue();
    }

    @Override
    public ConsumerComparison comparison() {
      return rabbit.comparison();
    }

    @Override
    public List<String> properties() {
      return List.of("--spring.rabbitmq.addresses=" + rabbit.uri(), "--bench.queue=" + rabbit.queue(),
          "--spring.rabbitmq.listener.simple.prefetch=" + prefetch,
          "--spring.rabbitmq.listener.simple.acknowledge-mode=auto");
    }

    @Override
    public void publish(String variant) throws Exception {
      rabbit.prepare(variant, "per-record");
    }

    @Override
    public void requireConsumed(String variant) throws Exception {
      rabbit.requireDrained(variant);
    }

    @Override
    public Lifecycle container(ConfigurableApplicationContext context, String id) {
      return context.getBean(RabbitListenerEndpointRegistry.class).getListenerContainer(id);
    }

    @Override
    public void close() {
      rabbit.close();
    }
  }

  /** Kafka: a broker in a JVM of its own, a topic per variant, the tables of the Kafka benchmark. */
  private static final class KafkaBroker implements Broker {
    private final KafkaBenchBroker.Running kafka;
    private final ConsumerComparison comparison;
    private final String topic = "idem-bench-" + UUID.randomUUID().toString().substring(0, 8);
    private final Map<String, Long> published = new HashMap<>();
    private final String ackMode;
    private final String batch;

    private KafkaBroker(KafkaBenchBroker.Running kafka, ConsumerComparison comparison, String ackMode, String batch) {
      this.kafka = kafka;
      this.comparison = comparison;
      this.ackMode = ackMode;
      this.batch = batch;
    }

    static KafkaBroker open(Map<String, String> f) throws Exception {
      String ackMode = f.getOrDefault("ack-mode", "batch");
      if (!ackMode.equals("batch") && !ackMode.equals("record")) {
        throw new IllegalArgumentException("--ack-mode must be batch or record (as the starter allows), got "
            + ackMode);
      }
      Sizes sizes = Sizes.of(f, "batch", 500);
      KafkaBenchBroker.Running kafka = startBroker();
      try {
        InboxTables tables = InboxTables.create(f, "kbench", sizes.prefill(), "kafka:prefill");
        KafkaBroker broker = new KafkaBroker(kafka, new ConsumerComparison(tables, sizes.events(), kafka::cpuTicks),
            ackMode, String.valueOf(sizes.batch()));
        kafka.createTopics(List.of(broker.topic + "-baseline", broker.topic + "-idem"), 1);
        return broker;
      } catch (Exception | Error e) {
        kafka.close();
        throw e;
      }
    }

    /**
     * Starts {@link KafkaBenchBroker}: from this jar ({@code java -jar bench-spring.jar <its class>}, see
     * {@link BenchMain}) when the benchmark runs from it, else on this JVM's class path.
     */
    private static KafkaBenchBroker.Running startBroker() throws IOException {
      String classPath = System.getProperty("java.class.path");
      if (!classPath.contains(File.pathSeparator) && classPath.endsWith(".jar")) {
        try (JarFile jar = new JarFile(classPath)) {
          if (BenchMain.class.getName().equals(jar.getManifest().getMainAttributes().getValue("Start-Class"))) {
            return KafkaBenchBroker.start(List.of("-jar", classPath, KafkaBenchBroker.class.getName()));
          }
        }
      }
      return KafkaBenchBroker.start();
    }

    @Override
    public String name() {
      return "kafka";
    }

    @Override
    public String title() {
      return "Kafka";
    }

    @Override
    public String settings() {
      return "ack mode " + ackMode.toUpperCase(Locale.ROOT) + ", max.poll.records " + batch + ", topics "
          + topic + "-<variant>";
    }

    @Override
    public ConsumerComparison comparison() {
      return comparison;
    }

    @Override
    public List<String> properties() {
      return List.of("--spring.kafka.bootstrap-servers=" + kafka.bootstrap(), "--bench.topic=" + topic,
          "--spring.kafka.consumer.auto-offset-reset=earliest", "--spring.kafka.consumer.max-poll-records=" + batch,
          "--spring.kafka.listener.ack-mode=" + ackMode);
    }

    @Override
    public void publish(String variant) {
      kafka.publish(topic + "-" + variant, comparison.events(), true);
      published.merge(variant, (long) comparison.events(), Long::sum);
    }

    @Override
    public void requireConsumed(String variant) throws Exception {
      String group = BenchListeners.containerId(name(), variant);
      long committed = kafka.committedOffsets(group);
      if (committed != published.get(variant)) {
        throw new IllegalStateException("group " + group + " committed offset " + committed + " of "
            + published.get(variant) + " records published to " + topic + "-" + variant);
      }
    }

    @Override
    public Lifecycle container(ConfigurableApplicationContext context, String id) {
      return context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer(id);
    }

    @Override
    public void close() throws Exception {
      try {
        comparison.tables().close();
      } finally {
        kafka.close();
      }
    }
  }
}
