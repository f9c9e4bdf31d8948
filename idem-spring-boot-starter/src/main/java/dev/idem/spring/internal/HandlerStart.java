package dev.idem.spring.internal;

import dev.idem.servlet.IdempotentExchange;
import dev.idem.spring.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.Ordered;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Tells the filter when an {@code @Idempotent} method really starts: on entry to the method, after Spring MVC has
 * routed the request, negotiated its content and bound its arguments. A request that Spring refuses before that
 * (a 400 for a body it cannot bind, a 405, 406 or 415) therefore leaves nothing kept, and the corrected retry with the
 * same key runs ({@code IdempotencyFilter.Builder#keepOnlyStartedHandlers}).
 */
public final class HandlerStart {
  private HandlerStart() {}

  /** The advisor: every {@code @Idempotent} method marks its exchange before its body runs. */
  public static Advisor advisor() {
    MethodInterceptor mark = invocation -> {
      RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
      if (attributes instanceof ServletRequestAttributes) {
        IdempotentExchange.find(((ServletRequestAttributes) attributes).getRequest())
            .ifPresent(IdempotentExchange::markHandlerStarted);
      }
      return invocation.proceed();
    };
    DefaultPointcutAdvisor advisor =
        new DefaultPointcutAdvisor(AnnotationMatchingPointcut.forMethodAnnotation(Idempotent.class), mark);
    advisor.setOrder(Ordered.HIGHEST_PRECEDENCE);
    return advisor;
  }

  /**
   * Makes sure the context proxies beans for infrastructure advisors, with class proxies (Spring Boot's own default),
   * as {@code @EnableTransactionManagement} does; a stronger proxy creator the application registers wins.
   */
  public static final class Proxying implements ImportBeanDefinitionRegistrar {
    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
      AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
      AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
    }
  }
}
