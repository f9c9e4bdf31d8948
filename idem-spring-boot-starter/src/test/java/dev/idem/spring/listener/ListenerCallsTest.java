package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.Reason;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;

/** How calls of an {@code @IdempotentListener} method are tried again, and which failures count as the method's. */
class ListenerCallsTest {
  private static final String[] NO_WAIT = {"idem.listeners.backoff.initial=0s", "idem.listeners.backoff.max=0s",
      "idem.listeners.max-attempts=3"};

  record Order(String id, int amount) {}

  /** Fails its first {@code failures} calls. */
  public static class Flaky {
    final AtomicInteger calls = new AtomicInteger();
    volatile int failures;

    public int calls() {
      return calls.get();
    }

    public void failFirst(int n) {
      failures = n;
    }

    @IdempotentListener(consumer = "listenfix-flaky", id = "#order.id()")
    public void on(Order order) {
      if (calls.incrementAndGet() <= failures) {
        throw new IllegalStateException("call " + calls.get() + " fails");
      }
    }
  }

  /** The id comes from a bean whose method fails. */
  public static class IdFromABean {
    public String idOf(Order order) {
      throw new IllegalStateException("the id service is down");
    }

    @IdempotentListener(consumer = "listenfix-bean-id", id = "@idFromABean.idOf(#order)")
    public void on(Order order) {}
  }

  /** Advice inside the listener's (like {@code @Timed} or an MDC aspect), counting the calls it sees. */
  @Configuration
  static class CountingAdvice {
    static final AtomicInteger SEEN = new AtomicInteger();

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor countingAdvisor() {
      MethodInterceptor counting = invocation -> {
        SEEN.incrementAndGet();
        return invocation.proceed();
      };
      DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
          AnnotationMatchingPointcut.forMethodAnnotation(IdempotentListener.class), counting);
      advisor.setOrder(Ordered.LOWEST_PRECEDENCE);
      return advisor;
    }

    @Bean
    Flaky flaky() {
      return new Flaky();
    }
  }

  @Test
  void eachTryRunsTheMethodsInnerAdviceAgain() {
    CountingAdvice.SEEN.set(0);
    try (ConfigurableApplicationContext context = ListenerStartupErrorsTest.run(CountingAdvice.class, NO_WAIT)) {
      Flaky flaky = context.getBean(Flaky.class);
      flaky.failFirst(2);

      flaky.on(new Order("listenfix-o-1", 1));

      assertThat(flaky.calls()).isEqualTo(3);
      assertThat(CountingAdvice.SEEN.get()).isEqualTo(3);
      assertThat(context.getBean(Inbox.class).contains("listenfix-flaky", "listenfix-o-1")).isTrue();
    }
  }

  /** The id from a failing bean; a payload Jackson cannot write. */
  @Configuration
  static class Unreadable {
    @Bean
    IdFromABean idFromABean() {
      return new IdFromABean();
    }

    @Bean
    NoJson noJson() {
      return new NoJson();
    }
  }

  /** A value Jackson fails on: its getter throws. */
  public static class Broken {
    public String getValue() {
      throw new IllegalStateException("cannot be read");
    }
  }

  public static class NoJson {
    @IdempotentListener(consumer = "listenfix-no-json", id = "#id")
    public void on(String id, Broken broken) {}
  }

  @Test
  void anIdOrPayloadThatCannotBeComputedIsTheMethodsFailureTriedAgainThenGivenUpOn() {
    try (ConfigurableApplicationContext context = ListenerStartupErrorsTest.run(Unreadable.class, NO_WAIT)) {
      ListenerGaveUpException noId = catchThrowableOfType(ListenerGaveUpException.class,
          () -> context.getBean(IdFromABean.class).on(new Order("listenfix-o-2", 1)));
      ListenerGaveUpException noPayload = catchThrowableOfType(ListenerGaveUpException.class,
          () -> context.getBean(NoJson.class).on("listenfix-o-3", new Broken()));

      assertThat(noId.decision().action()).isEqualTo(Action.DEAD_LETTER);
      assertThat(noId.decision().reason()).isNotIn(Reason.MISSING_ID, Reason.INVALID_ID);
      assertThat(noId.decision().attempts()).isEqualTo(3);
      assertThat(noId).hasStackTraceContaining("the id service is down");
      assertThat(noPayload.decision().action()).isEqualTo(Action.DEAD_LETTER);
      assertThat(noPayload.decision().attempts()).isEqualTo(3);
      assertThat(noPayload.messageId()).isEqualTo("listenfix-o-3");
      assertThat(noPayload).hasStackTraceContaining("cannot be read");
    }
  }
}
