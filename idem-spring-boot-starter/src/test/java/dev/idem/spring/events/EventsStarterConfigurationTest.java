package dev.idem.spring.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.OutboxRelay;
import dev.idem.spring.events.app.EventsApp;
import dev.idem.spring.events.app.EventsApp.Payments;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.events.bad.UnservedApp;
import dev.idem.spring.outbox.OutboxRelayLifecycle;
import dev.idem.test.Eventually;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The events starter's settings on H2: what is wrong stops the start and names the setting or class; the wake-up
 * after commit can be turned off; events published outside a transaction can be given a transaction of their own.
 */
class EventsStarterConfigurationTest {
  private static ConfigurableApplicationContext run(Class<?> app, String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.datasource.url=jdbc:h2:mem:events-config-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true", "--idem.outbox.relay.poll-interval=1m"));
    args.addAll(List.of(properties));
    return new SpringApplicationBuilder(app).run(args.toArray(String[]::new));
  }

  @Test
  void anExternalizedClassWhoseRouteNoOutboxRouteServesStopsTheStart() {
    assertThatThrownBy(() -> run(UnservedApp.class))
        .hasStackTraceContaining("@Externalized on " + UnservedApp.Lost.class.getName())
        .hasStackTraceContaining("route 'nowhere'")
        .hasStackTraceContaining("[somewhere]");
  }

  @Test
  void aConfiguredRouteToAnUnknownClassOrAnUnservedRouteStopsTheStart() {
    assertThatThrownBy(() -> run(EventsApp.class, "--idem.outbox.ordered-types=account.changed",
        "--idem.events.routes[com.example.NoSuchEvent]=recording"))
        .hasStackTraceContaining("idem.events.routes[com.example.NoSuchEvent]: no such event class");
    String refunded = EventsApp.Refunded.class.getName();
    assertThatThrownBy(() -> run(EventsApp.class, "--idem.outbox.ordered-types=account.changed",
        "--idem.events.routes[" + refunded + "]=elsewhere:refunds"))
        .hasStackTraceContaining("idem.events.routes[" + refunded + "] sends to 'elsewhere:refunds'")
        .hasStackTraceContaining("route 'elsewhere'");
    assertThatThrownBy(() -> run(EventsApp.class, "--idem.outbox.ordered-types=account.changed",
        "--idem.events.routes[" + refunded + "]=not a destination"))
        .hasStackTraceContaining("idem.events.routes[" + refunded + "]: destination must be");
  }

  @Test
  void aKeyWhoseTypeTheOutboxDoesNotOrderStopsTheStart() {
    assertThatThrownBy(() -> run(EventsApp.class))
        .hasStackTraceContaining("does not order type 'account.changed'")
        .hasStackTraceContaining("idem.outbox.ordered-types");
  }

  /**
   * Returns once every relay worker waits between its looks (in {@code OutboxRelay.pause}): its cycle has ended, and
   * no wake-up came during it, as that would have made it look again at once.
   */
  private static void awaitRelayWaiting(ConfigurableApplicationContext context) {
    String prefix = "idem-relay-" + context.getBean(OutboxRelayLifecycle.class).relay().orElseThrow().name() + "-";
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Eventually.await("the relay's workers wait between looks", Duration.ofSeconds(20), () -> {
      // one snapshot per thread: its state and its stack read together
      List<ThreadInfo> workers = Arrays.stream(threads.dumpAllThreads(false, false))
          .filter(t -> t.getThreadName().startsWith(prefix)).toList();
      return !workers.isEmpty() && workers.stream().allMatch(t -> t.getThreadState() == Thread.State.TIMED_WAITING
          && Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().equals(OutboxRelay.class.getName())
              && f.getMethodName().equals("pause")));
    }, waiting -> waiting);
  }

  @Test
  void withWakeOnCommitOffTheRelayWaitsForItsPoll() throws Exception {
    try (ConfigurableApplicationContext context = run(EventsApp.class, "--idem.outbox.ordered-types=account.changed",
        "--idem.outbox.relay.wake-on-commit=false")) {
      Payments payments = context.getBean(Payments.class);
      payments.useTable("ev_pay_wake_off");
      Recorder recorder = context.getBean(Recorder.class);
      // the primer is sent by a cycle that began after the wake-up; once the relay waits again, it waits a minute
      awaitRelayWaiting(context);
      CountDownLatch primer = recorder.expect("primer");
      payments.pay("primer", 1, false);
      context.getBean(OutboxRelayLifecycle.class).wakeUp();
      assertThat(primer.await(20, TimeUnit.SECONDS)).isTrue();
      awaitRelayWaiting(context);

      CountDownLatch arrived = recorder.expect("pay_late");
      payments.pay("pay_late", 1, false);
      assertThat(arrived.await(500, TimeUnit.MILLISECONDS)).as("the commit does not wake the relay").isFalse();
      context.getBean(OutboxRelayLifecycle.class).wakeUp();
      assertThat(arrived.await(20, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void outsideATransactionAnEventCanBeWrittenInATransactionOfItsOwn() throws Exception {
    try (ConfigurableApplicationContext context = run(EventsApp.class, "--idem.outbox.ordered-types=account.changed",
        "--idem.events.outside-transaction=own-transaction")) {
      Recorder recorder = context.getBean(Recorder.class);
      CountDownLatch arrived = recorder.expect("pay_own");
      context.getBean(Payments.class).payWithoutTransaction("pay_own");
      assertThat(arrived.await(20, TimeUnit.SECONDS)).as("written, committed and the relay woken").isTrue();
    }
  }

  @Test
  void eventsCanBeTurnedOff() {
    try (ConfigurableApplicationContext context = run(EventsApp.class, "--idem.events.enabled=false")) {
      assertThat(context.getBeanNamesForType(ExternalizedEvents.class)).isEmpty();
    }
  }
}
