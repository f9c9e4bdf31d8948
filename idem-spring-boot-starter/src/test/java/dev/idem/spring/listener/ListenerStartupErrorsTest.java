package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.Channel;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.Reason;
import dev.idem.outbox.memory.InMemoryInboxStore;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.spring.Idempotent;
import dev.idem.spring.WithoutPackage;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.core.Ordered;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.kafka.listener.AfterRollbackProcessor;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.scheduling.annotation.Async;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * What an {@code @IdempotentListener} method cannot be: each fails the start, naming the method and the way out. And
 * a method whose id is a SpEL expression over its arguments, called directly: its payload is the arguments' JSON.
 */
class ListenerStartupErrorsTest {

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Base {}

  public static class BlankConsumer {
    @KafkaListener(topics = "listeners-startup", autoStartup = "false")
    @IdempotentListener(consumer = " ")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class ConsumerWithControlCharacter {
    @IdempotentListener(consumer = "billing\n")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class ReturnsAValue {
    @IdempotentListener(consumer = "billing")
    public String on(ConsumerRecord<String, String> record) {
      return "done";
    }
  }

  public static class NoIdSource {
    @KafkaListener(topics = "listeners-startup", autoStartup = "false")
    @IdempotentListener(consumer = "billing")
    public void on(String payload) {}
  }

  public static class BadId {
    @IdempotentListener(consumer = "billing", id = "#payload +")
    public void on(String payload) {}
  }

  public static class OffsetIdWithoutRecord {
    @IdempotentListener(consumer = "billing", id = "#payload", offsetId = true)
    public void on(String payload) {}
  }

  public static class TwoMethodsOneConsumer {
    @IdempotentListener(consumer = "billing")
    public void first(ConsumerRecord<String, String> record) {}

    @IdempotentListener(consumer = "billing")
    public void second(ConsumerRecord<String, String> record) {}
  }

  /** An InboxHandler for idem.consumers.billing and an @IdempotentListener method, both of consumer 'billing'. */
  @Configuration
  static class SharedConsumerName {
    @Bean
    InboxHandler billingHandler() {
      return (tx, event) -> "billed";
    }

    @Bean
    Billing billing() {
      return new Billing();
    }
  }

  public static class Billing {
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class OwnTransaction {
    @IdempotentListener(consumer = "billing")
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class NoTransaction {
    @IdempotentListener(consumer = "billing")
    @Transactional(propagation = Propagation.NOT_SUPPORTED)
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class OtherTransactionManager {
    @IdempotentListener(consumer = "billing")
    @Transactional("elsewhere")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class AcknowledgesInside {
    @KafkaListener(topics = "listenfix-startup", autoStartup = "false")
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record, Acknowledgment ack) {}
  }

  public static class TakesTheChannel {
    @RabbitListener(queues = "listenfix-startup", autoStartup = "false")
    @IdempotentListener(consumer = "billing")
    public void on(Message message, Channel channel) {}
  }

  public static class BatchOfRecords {
    @KafkaListener(topics = "listenfix-startup", autoStartup = "false")
    @IdempotentListener(consumer = "billing", id = "#records[0].key()")
    public void on(List<ConsumerRecord<String, String>> records) {}
  }

  public static class BatchAttribute {
    @KafkaListener(topics = "listenfix-startup", autoStartup = "false", batch = "true")
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class RabbitOffsetId {
    @RabbitListener(queues = "listenfix-startup", autoStartup = "false")
    @IdempotentListener(consumer = "billing", offsetId = true)
    public void on(Message message) {}
  }

  /** Two transaction managers: the inbox's, and a primary one on another DataSource. */
  @Configuration
  static class TwoTransactionManagers {
    @Bean
    PlatformTransactionManager inboxTransactions(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    @Primary
    PlatformTransactionManager otherTransactions() {
      return new DataSourceTransactionManager(new DriverManagerDataSource("jdbc:h2:mem:listenfix-other"));
    }
  }

  public static class NamesTheInboxManager {
    @IdempotentListener(consumer = "billing", id = "#id")
    @Transactional("inboxTransactions")
    public void on(String id) {}
  }

  public static class DefaultsToAnotherManager {
    @IdempotentListener(consumer = "billing", id = "#id")
    @Transactional
    public void on(String id) {}
  }

  public static class NamesBootsManager {
    @IdempotentListener(consumer = "billing", id = "#id")
    @Transactional("transactionManager")
    public void on(String id) {}
  }

  @Import({TwoTransactionManagers.class, NamesTheInboxManager.class})
  static class NamesTheInboxManagerOfTwo {}

  @Import({TwoTransactionManagers.class, DefaultsToAnotherManager.class})
  static class DefaultsToAnotherManagerOfTwo {}

  public static class FinalMethod {
    @IdempotentListener(consumer = "billing")
    public final void on(ConsumerRecord<String, String> record) {}
  }

  public static class AsyncMethod {
    @Async
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {}
  }

  @Async
  public static class AsyncClass {
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {}
  }

  /** The transaction advisor ordered before Idem's: the method's transaction would be the outer one. */
  @Configuration
  @EnableTransactionManagement(order = 0)
  @Import(Fine.class)
  static class TransactionsFirst {}

  /** The transaction advisor ordered after Idem's, as by default. */
  @Configuration
  @EnableTransactionManagement(order = Ordered.LOWEST_PRECEDENCE)
  @Import(Fine.class)
  static class TransactionsLast {}

  public static class AlsoIdempotent {
    @Idempotent(key = "#record.key()")
    @IdempotentListener(consumer = "billing")
    public void on(ConsumerRecord<String, String> record) {}
  }

  /** A fine listener, with an inbox on memory: the listener's work could not join its transaction. */
  @Configuration
  static class MemoryInbox {
    @Bean
    Inbox inbox() {
      return Inbox.builder(new InMemoryInboxStore()).build();
    }

    @Bean
    Fine fine() {
      return new Fine();
    }
  }

  record Order(String id, int amount) {}

  /** Its id is the order's; its payload the order's JSON. */
  public static class Fine {
    private final AtomicInteger calls = new AtomicInteger();

    /** How often the method ran (read through the proxy). */
    public int calls() {
      return calls.get();
    }

    @Transactional
    @IdempotentListener(consumer = "orders", id = "#order.id()")
    public void on(Order order) {
      calls.incrementAndGet();
    }
  }

  static Throwable start(Class<?> bean, String... properties) {
    return catchThrowable(() -> {
      try (ConfigurableApplicationContext ignored = run(bean, properties)) {
        // started: no failure
      }
    });
  }

  static ConfigurableApplicationContext run(Class<?> bean, String... properties) {
    return run(null, bean, properties);
  }

  private static ConfigurableApplicationContext run(ClassLoader loader, Class<?> bean, String... properties) {
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:mem:listeners-startup-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true", "--idem.store.initialize-schema=true"));
    for (String p : properties) {
      args.add("--" + p);
    }
    return new SpringApplicationBuilder(Base.class, bean).web(WebApplicationType.NONE)
        .resourceLoader(new DefaultResourceLoader(loader)).run(args.toArray(String[]::new));
  }

  static String messages(Throwable t) {
    List<String> all = new ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.add(String.valueOf(c.getMessage()));
    }
    return String.join(" | ", all);
  }

  private static String source(Class<?> type) {
    return type.getName() + ".on";
  }

  @Test
  void aMissingOrInvalidConsumerName() {
    assertThat(messages(start(BlankConsumer.class))).contains("@IdempotentListener on " + source(BlankConsumer.class)
        + " needs a consumer name");
    assertThat(messages(start(ConsumerWithControlCharacter.class))).contains("@IdempotentListener(consumer = ...) on "
        + source(ConsumerWithControlCharacter.class) + " must be 1 to 255 characters without control characters");
  }

  @Test
  void aMethodThatReturnsAValue() {
    assertThat(messages(start(ReturnsAValue.class))).contains("@IdempotentListener on " + source(ReturnsAValue.class)
        + " must return void, not java.lang.String");
  }

  @Test
  void noSourceOfMessageIds() {
    assertThat(messages(start(NoIdSource.class))).contains("@IdempotentListener on " + source(NoIdSource.class)
        + " has no source of message ids");
    assertThat(messages(start(BadId.class))).contains("@IdempotentListener(id = \"#payload +\") on "
        + source(BadId.class) + " is not a valid SpEL expression");
    assertThat(messages(start(OffsetIdWithoutRecord.class))).contains("@IdempotentListener(offsetId = true) on "
        + source(OffsetIdWithoutRecord.class) + " needs the Kafka record as a parameter");
  }

  @Test
  void twoMethodsWithOneConsumerName() {
    assertThat(messages(start(TwoMethodsOneConsumer.class))).contains("@IdempotentListener consumer 'billing' is"
        + " declared twice: on " + TwoMethodsOneConsumer.class.getName() + ".first and on "
        + TwoMethodsOneConsumer.class.getName() + ".second");
  }

  @Test
  void aConsumerNameSharedWithAConsumerOfPropertiesOrAWebhookReceiver() {
    assertThat(messages(start(SharedConsumerName.class, "idem.consumers.rabbitmq.uri=amqp://guest:guest@127.0.0.1:1",
        "idem.consumers.billing.handler=billingHandler", "idem.consumers.billing.rabbitmq.queue=billing")))
        .contains("inbox consumer 'billing' is declared twice: by idem.consumers.billing and by @IdempotentListener"
            + " on " + source(Billing.class) + "; each entry point needs a consumer name of its own");
    assertThat(messages(start(Billing.class, "idem.outbox.webhooks.receivers.provider.path=/webhooks/provider",
        "idem.outbox.webhooks.receivers.provider.secrets=" + WebhookSecret.generate().reveal(),
        "idem.outbox.webhooks.receivers.provider.consumer=billing")))
        .contains("inbox consumer 'billing' is declared twice: by idem.outbox.webhooks.receivers.provider.consumer"
            + " and by @IdempotentListener on " + source(Billing.class));
    assertThat(start(Billing.class, "idem.outbox.webhooks.receivers.provider.path=/webhooks/provider",
        "idem.outbox.webhooks.receivers.provider.secrets=" + WebhookSecret.generate().reveal())).isNull();
    String secret = WebhookSecret.generate().reveal();
    assertThat(start(Billing.class, "idem.outbox.webhooks.receivers.old.path=/webhooks/old",
        "idem.outbox.webhooks.receivers.old.secrets=" + secret, "idem.outbox.webhooks.receivers.old.consumer=stripe",
        "idem.outbox.webhooks.receivers.new.path=/webhooks/new", "idem.outbox.webhooks.receivers.new.secrets=" + secret,
        "idem.outbox.webhooks.receivers.new.consumer=stripe"))
        .as("two receivers of one sender share a consumer on purpose").isNull();
  }

  @Test
  void aTransactionThatWouldCommitApartFromTheInboxRow() {
    assertThat(messages(start(OwnTransaction.class))).contains("@IdempotentListener on " + source(OwnTransaction.class)
        + " is also @Transactional with a propagation that leaves the inbox's transaction");
    assertThat(messages(start(NoTransaction.class))).contains("@IdempotentListener on " + source(NoTransaction.class)
        + " is also @Transactional with a propagation that leaves the inbox's transaction");
    assertThat(messages(start(OtherTransactionManager.class))).contains("@IdempotentListener on "
        + source(OtherTransactionManager.class) + " is @Transactional(\"elsewhere\")");
  }

  @Test
  void ackModesThatAckInsideTheMethod() {
    assertThat(messages(start(AcknowledgesInside.class))).contains("@IdempotentListener on "
        + source(AcknowledgesInside.class) + " takes a " + Acknowledgment.class.getName() + " parameter: ack modes"
        + " that ack inside the method are not supported");
    assertThat(messages(start(TakesTheChannel.class))).contains("@IdempotentListener on "
        + source(TakesTheChannel.class) + " takes a " + Channel.class.getName() + " parameter: ack modes"
        + " that ack inside the method are not supported");
  }

  @Test
  void batchListenersAndRabbitOffsetIds() {
    assertThat(messages(start(BatchOfRecords.class))).contains("@IdempotentListener on "
        + source(BatchOfRecords.class) + " is a batch listener");
    assertThat(messages(start(BatchAttribute.class))).contains("@IdempotentListener on "
        + source(BatchAttribute.class) + " is a batch listener");
    assertThat(messages(start(RabbitOffsetId.class))).contains("@IdempotentListener(offsetId = true) on "
        + source(RabbitOffsetId.class) + " is a @RabbitListener");
  }

  @Test
  void aTransactionalThatNamesOrDefaultsToTheInboxsTransactionManagerIsFine() {
    assertThat(start(NamesBootsManager.class)).isNull();
    assertThat(start(NamesTheInboxManagerOfTwo.class)).isNull();
    assertThat(messages(start(DefaultsToAnotherManagerOfTwo.class))).contains("@IdempotentListener on "
        + source(DefaultsToAnotherManager.class) + " is @Transactional, which runs on another transaction manager");
  }

  @Test
  void methodsAProxyCannotInterceptOrThatAreAlsoIdempotent() {
    assertThat(messages(start(FinalMethod.class))).contains("@IdempotentListener on " + source(FinalMethod.class)
        + " must be on a method that is not final, private or static");
    assertThat(messages(start(AlsoIdempotent.class))).contains(source(AlsoIdempotent.class)
        + " has both @Idempotent and @IdempotentListener");
  }

  @Test
  void anAsyncMethodOrClass() {
    assertThat(messages(start(AsyncMethod.class))).contains("@IdempotentListener on " + source(AsyncMethod.class)
        + " is @Async (on the method or its class): the call would return before its work ran");
    assertThat(messages(start(AsyncClass.class))).contains("@IdempotentListener on " + source(AsyncClass.class)
        + " is @Async (on the method or its class): the call would return before its work ran");
  }

  @Test
  void aTransactionAdvisorOrderedBeforeIdemsFailsTheStartAndOneAfterItIsFine() {
    assertThat(messages(start(TransactionsFirst.class))).contains("@IdempotentListener on " + source(Fine.class)
        + " runs inside a transaction advisor ordered before Idem's (order 0, Idem's "
        + IdemListenersAutoConfiguration.ORDER + ")");
    assertThat(start(TransactionsLast.class)).isNull();
  }

  @Test
  void noJdbcInboxToRunWith() {
    assertThat(messages(start(Fine.class, "idem.outbox.enabled=false"))).contains("@IdempotentListener methods exist ("
        + source(Fine.class) + " ...) but the application has no Inbox bean");
    assertThat(messages(start(MemoryInbox.class))).contains("@IdempotentListener methods exist (" + source(Fine.class)
        + " ...) but the Inbox bean's store is " + InMemoryInboxStore.class.getName() + ", not a JdbcInboxStore");
  }

  @Test
  void aPayloadOfJsonWithoutJackson() {
    Throwable failure = catchThrowable(() -> run(new WithoutPackage("tools.jackson."), Fine.class).close());

    assertThat(messages(failure)).contains("@IdempotentListener on " + source(Fine.class) + " takes no raw message,"
        + " so its payload is its arguments as JSON, which needs Jackson 3");
  }

  @Test
  void listenersWithoutIdemOutboxWouldBeIgnored() {
    Throwable failure = catchThrowable(() -> run(new WithoutPackage("dev.idem.outbox."), Fine.class).close());

    assertThat(messages(failure)).contains("@IdempotentListener methods exist (bean 'listenerStartupErrorsTest.Fine'"
        + " of " + Fine.class.getName() + " ...) but nothing runs them through an inbox");
  }

  @Test
  void aListenerBeanThatIsNotProxied() {
    Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(Base.class)
        .web(WebApplicationType.NONE)
        .initializers(context -> context.getBeanFactory().registerSingleton("listenfixUnproxied", new Fine()))
        .run("--spring.datasource.url=jdbc:h2:mem:listenfix-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
            "--idem.outbox.initialize-schema=true", "--idem.store.initialize-schema=true").close());

    assertThat(messages(failure)).contains("bean 'listenfixUnproxied' (" + Fine.class.getName() + ") has"
        + " @IdempotentListener methods but is not a Spring AOP proxy running them through the inbox");
  }

  @Test
  void badProperties() {
    assertThat(messages(start(Fine.class, "idem.listeners.max-attempts=0")))
        .contains("idem.listeners.max-attempts must be 1 to 100, or -1 (never give up), got 0");
    assertThat(messages(start(Fine.class, "idem.listeners.backoff.initial=2s", "idem.listeners.backoff.max=1s")))
        .contains("idem.listeners.backoff.initial and .max need 0 <= initial <= max <= 1h, got PT2S and PT1S");
    assertThat(messages(start(Fine.class, "idem.listeners.max-hold=1h")))
        .contains("idem.listeners.max-hold must be 0s to 10m");
  }

  public static class KafkaPayments {
    @KafkaListener(topics = "listeners-startup", autoStartup = "false")
    @IdempotentListener(consumer = "payments")
    public void on(ConsumerRecord<String, String> record) {}
  }

  public static class NamedFactoryPayments {
    @KafkaListener(topics = "listeners-startup", autoStartup = "false",
        containerFactory = "${listeners.factory:databaseContainers}")
    @IdempotentListener(consumer = "payments")
    public void on(ConsumerRecord<String, String> record) {}
  }

  /** Containers that run in the database's transaction manager, as the default factory and as a named one. */
  @Configuration
  @Import({KafkaPayments.class})
  static class DatabaseTransactionOnTheDefaultFactory {
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> kafkaListenerContainerFactory(
        ConsumerFactory<Object, Object> consumers, PlatformTransactionManager transactionManager) {
      return databaseContainers(consumers, transactionManager);
    }

    static ConcurrentKafkaListenerContainerFactory<Object, Object> databaseContainers(
        ConsumerFactory<Object, Object> consumers, PlatformTransactionManager transactionManager) {
      ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
      factory.setConsumerFactory(consumers);
      factory.getContainerProperties().setTransactionManager(transactionManager);
      return factory;
    }
  }

  @Configuration
  @Import({NamedFactoryPayments.class})
  static class DatabaseTransactionOnANamedFactory {
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> databaseContainers(
        ConsumerFactory<Object, Object> consumers, PlatformTransactionManager transactionManager) {
      return DatabaseTransactionOnTheDefaultFactory.databaseContainers(consumers, transactionManager);
    }
  }

  /**
   * Containers that run in the transactions of a data source that is not the inbox's, with the starter's
   * after-rollback processor.
   */
  @Configuration
  @Import({KafkaPayments.class})
  static class OtherDataSourceOnTheDefaultFactory {
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> kafkaListenerContainerFactory(
        ConsumerFactory<Object, Object> consumers,
        @Qualifier("idemListenerAfterRollbackProcessor") AfterRollbackProcessor<Object, Object> afterRollback) {
      ConcurrentKafkaListenerContainerFactory<Object, Object> factory = otherDataSource(consumers);
      factory.setAfterRollbackProcessor(afterRollback);
      return factory;
    }

    static ConcurrentKafkaListenerContainerFactory<Object, Object> otherDataSource(
        ConsumerFactory<Object, Object> consumers) {
      return DatabaseTransactionOnTheDefaultFactory.databaseContainers(consumers, new DataSourceTransactionManager(
          new DriverManagerDataSource("jdbc:h2:mem:elsewhere-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")));
    }
  }

  /** The same, without an after-rollback processor: Spring's default, which skips a record after ten tries. */
  @Configuration
  @Import({KafkaPayments.class})
  static class OtherDataSourceWithoutIdemsAfterRollbackProcessor {
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> kafkaListenerContainerFactory(
        ConsumerFactory<Object, Object> consumers) {
      return OtherDataSourceOnTheDefaultFactory.otherDataSource(consumers);
    }
  }

  @Test
  void aKafkaContainerFactoryThatRunsInTheDatabasesTransactionManager() {
    assertThat(messages(start(DatabaseTransactionOnTheDefaultFactory.class)))
        .contains("@IdempotentListener on " + KafkaPayments.class.getName() + ".on is called by the Kafka container"
            + " factory 'kafkaListenerContainerFactory', whose containers run in "
            + JdbcTransactionManager.class.getName() + ", a transaction manager of the inbox's DataSource")
        .contains("spring.kafka.producer.transaction-id-prefix");
    assertThat(messages(start(DatabaseTransactionOnANamedFactory.class)))
        .contains("is called by the Kafka container factory 'databaseContainers'");
    assertThat(start(KafkaPayments.class)).as("Spring Boot's own factory").isNull();
    assertThat(start(OtherDataSourceOnTheDefaultFactory.class)).as("another data source's transactions").isNull();
    assertThat(messages(start(OtherDataSourceWithoutIdemsAfterRollbackProcessor.class)))
        .contains("(container factory 'kafkaListenerContainerFactory'), whose after-rollback processor is "
            + DefaultAfterRollbackProcessor.class.getName() + ", not a bean (Spring's default when the factory sets"
            + " none)")
        .contains("set the starter's (the bean 'idemListenerAfterRollbackProcessor') on the factory"
            + " (setAfterRollbackProcessor)");
  }

  public static class CustomFactoryPayments {
    @KafkaListener(topics = "listeners-startup", autoStartup = "false", containerFactory = "customContainers")
    @IdempotentListener(consumer = "payments")
    public void on(ConsumerRecord<String, String> record) {}
  }

  /** A container factory of the application's own, not built by Spring Boot: Spring's default error handler. */
  @Configuration
  @Import({CustomFactoryPayments.class})
  static class CustomFactoryWithoutIdemsHandler {
    @Bean
    ConcurrentKafkaListenerContainerFactory<Object, Object> customContainers(
        ConsumerFactory<Object, Object> consumers) {
      ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
      factory.setConsumerFactory(consumers);
      return factory;
    }
  }

  /** The same factory, given the starter's error handler, as the guide shows. */
  @Configuration
  @Import({CustomFactoryPayments.class, ListenersGuideTest.CustomContainers.class})
  static class CustomFactoryWithIdemsHandler {}

  @Test
  void aKafkaContainerFactoryWithoutIdemsErrorHandlerFailsTheStartNamingIt() {
    assertThat(messages(start(CustomFactoryWithoutIdemsHandler.class)))
        .contains("@IdempotentListener on " + source(CustomFactoryPayments.class) + " is called by the Kafka listener"
            + " container '")
        .contains("(container factory 'customContainers'), whose error handler is none, so Spring's default")
        .contains("set the starter's (the bean 'idemListenerErrorHandler') on the factory (setCommonErrorHandler)");
    assertThat(start(CustomFactoryWithIdemsHandler.class)).as("the starter's handler on the factory").isNull();
    assertThat(start(CustomFactoryWithoutIdemsHandler.class, "idem.listeners.kafka.error-handler=false"))
        .as("the application's own error handling, documented").isNull();
  }

  /**
   * Two {@code KafkaTemplate}s, neither {@code @Primary}: the starter cannot tell which one publishes dead letters,
   * registers no error handler, and Spring Boot's factory falls back to Spring's default.
   */
  @Configuration
  @Import({KafkaPayments.class})
  static class TwoKafkaTemplates {
    @Bean
    KafkaTemplate<Object, Object> ordersTemplate(ProducerFactory<Object, Object> producers) {
      return new KafkaTemplate<>(producers);
    }

    @Bean
    KafkaTemplate<Object, Object> auditTemplate(ProducerFactory<Object, Object> producers) {
      return new KafkaTemplate<>(producers);
    }
  }

  /** The same two, one of them {@code @Primary}: the starter's handler publishes through that one. */
  @Configuration
  @Import({KafkaPayments.class})
  static class TwoKafkaTemplatesOnePrimary {
    @Bean
    @Primary
    KafkaTemplate<Object, Object> ordersTemplate(ProducerFactory<Object, Object> producers) {
      return new KafkaTemplate<>(producers);
    }

    @Bean
    KafkaTemplate<Object, Object> auditTemplate(ProducerFactory<Object, Object> producers) {
      return new KafkaTemplate<>(producers);
    }
  }

  @Test
  void twoKafkaTemplatesWithoutAPrimaryOneFailTheStartSayingWhyTheStarterHasNoHandler() {
    assertThat(messages(start(TwoKafkaTemplates.class)))
        .contains("@IdempotentListener on " + source(KafkaPayments.class) + " is called by the Kafka listener"
            + " container '")
        .contains("(container factory 'kafkaListenerContainerFactory'), whose error handler is none, so Spring's"
            + " default")
        .contains("set the starter's, which it did not register (it needs a single, or a @Primary, KafkaTemplate,"
            + " and no CommonErrorHandler bean of the application's) on the factory (setCommonErrorHandler)");
    assertThat(start(TwoKafkaTemplatesOnePrimary.class)).as("a @Primary template").isNull();
  }

  @Test
  void anIdFromTheArgumentsTakesEffectOnceAndAnotherPayloadUnderItIsGivenUpOn() {
    try (ConfigurableApplicationContext context = run(Fine.class)) {
      Fine fine = context.getBean(Fine.class);

      fine.on(new Order("o-1", 5));
      fine.on(new Order("o-1", 5));
      Throwable mismatch = catchThrowable(() -> fine.on(new Order("o-1", 6)));

      assertThat(fine.calls()).isEqualTo(1);
      assertThat(context.getBean(Inbox.class).contains("orders", "o-1")).isTrue();
      assertThat(mismatch).isInstanceOf(ListenerGaveUpException.class);
      ListenerGaveUpException gaveUp = (ListenerGaveUpException) mismatch;
      assertThat(gaveUp.decision().action()).isEqualTo(Action.DEAD_LETTER);
      assertThat(gaveUp.decision().reason()).isEqualTo(Reason.PAYLOAD_MISMATCH);
      assertThat(gaveUp.messageId()).isEqualTo("o-1");
      assertThatThrownBy(() -> fine.on(new Order(null, 1))).isInstanceOf(ListenerGaveUpException.class)
          .hasMessageContaining("REJECT(missing_event_id)");
    }
  }
}
