package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.spring.Idempotent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.jdbc.core.JdbcTemplate;

/** The advice after the idempotent interceptor runs on every try of a call, not on the first one only. */
class H2MethodAdviceTest {

  public static class Payments {
    final AtomicInteger runs = new AtomicInteger();

    @Idempotent(key = "#id", lookupFirst = false)
    public int pay(String id) {
      return runs.incrementAndGet();
    }

    public int runs() {
      return runs.get();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    static final AtomicInteger ADVISED = new AtomicInteger();

    @Bean
    Payments payments() {
      return new Payments();
    }

    /**
     * Advice ordered after the idempotent interceptor (as a {@code @Transactional}'s is): counts its calls. An
     * infrastructure advisor, as the transaction's is, so that Spring's auto-proxying applies it without AspectJ.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor countingAdvisor() {
      DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(
          AnnotationMatchingPointcut.forMethodAnnotation(Idempotent.class), (MethodInterceptor) invocation -> {
            ADVISED.incrementAndGet();
            return invocation.proceed();
          });
      advisor.setOrder(IdemMethodAutoConfiguration.ORDER + 1);
      return advisor;
    }
  }

  @Test
  void aSecondRoundAfterACollisionWithAnExpiredRecordRunsThroughTheAdviceAgain() {
    List<String> args = new ArrayList<>(List.of("--idem.store.initialize-schema=true"));
    args.addAll(DataSourceArguments.h2InMemory("advice"));
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE).run(args.toArray(String[]::new))) {
      Payments payments = context.getBean(Payments.class);
      App.ADVISED.set(0);
      assertThat(payments.pay("p-1")).isEqualTo(1);
      assertThat(App.ADVISED).hasValue(1);

      // the record expires: the next call (no look-up first) runs, collides with it, and runs again in a second round
      int expired = context.getBean(JdbcTemplate.class)
          .update("UPDATE idem_record SET expires_at = 1, retain_until = NULL WHERE idem_key = 'p-1'");
      assertThat(expired).isEqualTo(1);
      int result = payments.pay("p-1");

      assertThat(payments.runs()).isEqualTo(3);
      assertThat(result).isEqualTo(3);
      assertThat(App.ADVISED).as("the advice ran on each try of the method").hasValue(payments.runs());
    }
  }
}
