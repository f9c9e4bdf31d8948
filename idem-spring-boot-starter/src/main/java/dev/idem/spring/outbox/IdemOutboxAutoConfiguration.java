package dev.idem.spring.outbox;

import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.spring.boot.IdemAutoConfiguration;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import dev.idem.webhook.WebhookReceiverServlet;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The outbox and the inbox on the application's {@link DataSource} when {@code dev.idem:idem-outbox} is on the
 * classpath: an {@link Outbox} and an {@link Inbox} (each backs off when the application defines its own), a relay
 * ({@link OutboxRelayLifecycle}) with every {@link OutboxRoute} bean, the purge ({@link OutboxPurge}) and
 * {@link WebhookReceivers}. Properties: {@link IdemOutboxProperties} ({@code idem.outbox.*}), validated at startup.
 * The relay is woken as soon as a Spring transaction that enqueued events for it commits ({@link SpringAfterCommit};
 * {@code idem.outbox.relay.wake-on-commit=false} leaves them to its poll). The inbox runs the transactions it opens
 * itself (each message of a consumer of {@code idem.consumers.*}, each webhook) as Spring transactions of its data
 * source's transaction manager ({@link SpringInboxTransactions}).
 *
 * <p>Enqueue in the application's transaction through Spring's connection, so that the event commits with the
 * business write:
 *
 * <pre>{@code
 * @Transactional
 * public void pay(Payment p) {
 *   payments.insert(p);
 *   outbox.enqueue(JdbcTransaction.of(DataSourceUtils.getConnection(dataSource)),
 *       OutboxEvent.builder("payment.succeeded").aggregate("payment", p.id()).payload(json(p))
 *           .destination("webhook:" + p.endpointId()).build());
 * }
 * }</pre>
 */
@AutoConfiguration(after = {IdemAutoConfiguration.class, DataSourceAutoConfiguration.class,
    DataSourceTransactionManagerAutoConfiguration.class})
@ConditionalOnClass({Outbox.class, Inbox.class})
@ConditionalOnProperty(prefix = "idem.outbox", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemOutboxProperties.class)
public class IdemOutboxAutoConfiguration {
  private static final System.Logger LOG = System.getLogger(IdemOutboxAutoConfiguration.class.getName());

  /** The outbox's store: the JDBC one on the application's single (or primary) data source. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(DataSource.class)
  public OutboxStore outboxStore(DataSource dataSource, IdemOutboxProperties properties) {
    properties.validate();
    return JdbcOutboxStore.builder(dataSource).table(properties.getTable())
        .createSchemaIfMissing(properties.isInitializeSchema()).build();
  }

  /** The inbox's store: the JDBC one on the application's single (or primary) data source. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(DataSource.class)
  public InboxStore inboxStore(DataSource dataSource, IdemOutboxProperties properties) {
    properties.validate();
    return JdbcInboxStore.builder(dataSource).table(properties.getInboxTable())
        .createSchemaIfMissing(properties.isInitializeSchema()).build();
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(OutboxStore.class)
  public Outbox outbox(OutboxStore store, IdemOutboxProperties properties, ObjectProvider<Clock> clock) {
    return Outbox.builder(store).orderedTypes(properties.getOrderedTypes())
        .clock(clock.getIfAvailable(Clock::systemUTC)).afterCommit(new SpringAfterCommit()).build();
  }

  /**
   * The inbox. On a JDBC store whose data source has a transaction manager (Spring Boot's
   * {@code JdbcTransactionManager} by default, or a {@code JpaTransactionManager} that exposes that data source), the
   * transactions the inbox opens itself (the broker consumers of {@code idem.consumers.*}, the webhook receivers) are
   * Spring transactions of it ({@link SpringInboxTransactions}).
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(InboxStore.class)
  public Inbox inbox(InboxStore store, ObjectProvider<InboxListener> listeners, ObjectProvider<Clock> clock,
      ObjectProvider<PlatformTransactionManager> transactionManagers) {
    Inbox.Builder b = Inbox.builder(store).clock(clock.getIfAvailable(Clock::systemUTC))
        .listener(inboxListener(listeners.orderedStream().collect(Collectors.toList())));
    if (store instanceof JdbcInboxStore jdbc) {
      PlatformTransactionManager tm = transactionManagerOf(jdbc.dataSource(), transactionManagers);
      if (tm != null) {
        b.transactions(new SpringInboxTransactions(tm, jdbc));
      }
    }
    return b.build();
  }

  /**
   * The transaction manager whose transactions hold a connection of {@code dataSource}
   * ({@link SpringDataSourceTransactions#dataSourceOf}): the only one, or the primary one among several; null when
   * none does, or when several do and none of them is primary (with a warning: the inbox then keeps its store's own
   * transactions, and a handler's Spring data access joins them as before, see {@code JoinedHandler}).
   */
  static PlatformTransactionManager transactionManagerOf(DataSource dataSource,
      ObjectProvider<PlatformTransactionManager> transactionManagers) {
    List<PlatformTransactionManager> managing = transactionManagers.orderedStream()
        .filter(tm -> SpringDataSourceTransactions.dataSourceOf(tm) == dataSource).collect(Collectors.toList());
    if (managing.size() <= 1) {
      return managing.isEmpty() ? null : managing.get(0);
    }
    PlatformTransactionManager primary = transactionManagers.getIfUnique();
    if (primary != null && managing.contains(primary)) {
      return primary;
    }
    LOG.log(System.Logger.Level.WARNING, managing.size() + " transaction managers manage the inbox's data source ("
        + managing + "), and none is @Primary: the inbox keeps its store's own transactions, so events published in"
        + " a handler are refused and after-commit callbacks run before the inbox commits. Mark one @Primary, or"
        + " define the Inbox bean with Inbox.builder(store).transactions(new SpringInboxTransactions(manager, store))");
    return null;
  }

  /** The relay, with every route; only when at least one {@link OutboxRoute} bean exists. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean({Outbox.class, OutboxRoute.class})
  @ConditionalOnProperty(prefix = "idem.outbox.relay", name = "enabled", havingValue = "true", matchIfMissing = true)
  public OutboxRelayLifecycle outboxRelay(Outbox outbox, ObjectProvider<OutboxRoute> routes,
      ObjectProvider<OutboxListener> listeners, IdemOutboxProperties properties) {
    properties.validate();
    IdemOutboxProperties.Relay r = properties.getRelay();
    List<OutboxRoute> all = routes.orderedStream().collect(Collectors.toList());
    OutboxListener listener = outboxListener(listeners.orderedStream().collect(Collectors.toList()));
    return new OutboxRelayLifecycle(() -> {
      OutboxRelay.Builder b = OutboxRelay.builder(outbox).name(r.getName()).threads(r.getThreads())
          .batchSize(r.getBatchSize()).lease(r.getLease()).pollInterval(r.getPollInterval())
          .maxAttempts(r.getMaxAttempts()).deleteDelivered(r.isDeleteDelivered()).wakeOnCommit(r.isWakeOnCommit())
          .listener(listener);
      for (OutboxRoute route : all) {
        if (route.maxAttempts() == 0) {
          b.route(route.name(), route.transport());
        } else {
          b.route(route.name(), route.transport(), route.maxAttempts());
        }
      }
      return b.build();
    });
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idem.outbox.purge", name = "enabled", havingValue = "true", matchIfMissing = true)
  public OutboxPurge outboxPurge(ObjectProvider<Outbox> outbox, ObjectProvider<Inbox> inbox,
      IdemOutboxProperties properties) {
    properties.validate();
    IdemOutboxProperties.Purge p = properties.getPurge();
    return new OutboxPurge(outbox.getIfUnique(), inbox.getIfUnique(), p.getInterval(), p.getDeliveredRetention(),
        p.getInboxRetention(), p.getBatchSize());
  }

  /** The webhook receivers' registrations; only with {@code idem-webhook} and Spring's servlet support. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({WebhookReceiverServlet.class, ServletRegistrationBean.class})
  static class Webhooks {
    @Bean
    @ConditionalOnMissingBean
    WebhookReceivers webhookReceivers(IdemOutboxProperties properties, ObjectProvider<Inbox> inbox) {
      properties.validate();
      return new WebhookReceivers(properties, inbox::getIfUnique);
    }
  }

  static InboxListener inboxListener(List<InboxListener> listeners) {
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    List<InboxListener> all = List.copyOf(listeners);
    return new InboxListener() {
      @Override
      public void processed(String consumer) {
        all.forEach(l -> safely(() -> l.processed(consumer)));
      }

      @Override
      public void duplicate(String consumer) {
        all.forEach(l -> safely(() -> l.duplicate(consumer)));
      }

      @Override
      public void payloadMismatch(String consumer, String eventId) {
        all.forEach(l -> safely(() -> l.payloadMismatch(consumer, eventId)));
      }
    };
  }

  static OutboxListener outboxListener(List<OutboxListener> listeners) {
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    List<OutboxListener> all = List.copyOf(listeners);
    return new OutboxListener() {
      @Override
      public void claimed(String relay, int count) {
        all.forEach(l -> safely(() -> l.claimed(relay, count)));
      }

      @Override
      public void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {
        all.forEach(l -> safely(() -> l.delivered(relay, message, sinceEnqueue)));
      }

      @Override
      public void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {
        all.forEach(l -> safely(() -> l.failed(relay, message, result, dead)));
      }

      @Override
      public void leaseLost(String relay, int rows) {
        all.forEach(l -> safely(() -> l.leaseLost(relay, rows)));
      }

      @Override
      public void relayError(String relay, Throwable error) {
        all.forEach(l -> safely(() -> l.relayError(relay, error)));
      }
    };
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException ignored) {
      // one listener must not keep the others from hearing
    }
  }
}
