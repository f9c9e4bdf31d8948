package dev.idem.spring.method;

import dev.idem.core.Idem;
import dev.idem.spring.Idempotent;
import dev.idem.spring.boot.IdemAutoConfiguration;
import dev.idem.spring.boot.IdemProperties;
import java.lang.reflect.Method;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Controller;
import org.springframework.transaction.PlatformTransactionManager;
import tools.jackson.databind.ObjectMapper;

/**
 * {@link Idempotent} on methods of any bean that is not a controller: an advisor whose interceptor runs each call as
 * an {@link dev.idem.core.IdempotentCall}, outside the method's own {@code @Transactional} (so that the method joins
 * the transaction the record is written in). Needs Jackson 3 for the return values, as Spring Boot 4 brings it.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnClass({Idem.class, ObjectMapper.class, MethodInterceptor.class})
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
public class IdemMethodAutoConfiguration {
  /** Runs before the transaction advisor (lowest precedence), so that the record's transaction is the outer one. */
  static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static IdempotentMethodInterceptor idemMethodInterceptor(ListableBeanFactory beans, ObjectProvider<Idem> idem,
      ObjectProvider<ObjectMapper> mapper, ObjectProvider<PlatformTransactionManager> transactions,
      ObjectProvider<IdemProperties> properties, Environment environment) {
    return new IdempotentMethodInterceptor(beans, idem, mapper, transactions, properties,
        environment.getProperty(IdempotentMethodInterceptor.ALLOW_SEPARATE_COMMITS, Boolean.class, false));
  }

  @Bean
  @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
  static Advisor idemMethodAdvisor(IdempotentMethodInterceptor interceptor) {
    DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(new BeanMethods(), interceptor);
    advisor.setOrder(ORDER);
    return advisor;
  }

  /** Methods annotated {@code @Idempotent} on classes that are not controllers. */
  static final class BeanMethods extends StaticMethodMatcherPointcut {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      if (AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)) {
        return false;
      }
      Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
      return AnnotatedElementUtils.hasAnnotation(specific, Idempotent.class);
    }
  }
}
