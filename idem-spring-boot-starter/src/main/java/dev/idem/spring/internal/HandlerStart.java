package dev.idem.spring.internal;

import dev.idem.servlet.IdempotentExchange;
import dev.idem.spring.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.Ordered;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * Tells the filter when an {@code @Idempotent} method really starts: on entry to the method, after Spring MVC has
 * routed the request, negotiated its content and bound its arguments. A request that Spring refuses before that
 * (a 400 for a body it cannot bind, a 405, 406 or 415) therefore leaves nothing kept, and the corrected retry with the
 * same key runs ({@code IdempotencyFilter.Builder#keepOnlyStartedHandlers}).
 *
 * <p>Only the beans with {@code @Idempotent} methods are proxied, by a post-processor of their own (class proxies),
 * and the mark is the innermost advice: {@code @PreAuthorize} or method validation run before it, so what they refuse
 * is not kept either. The application's other proxies are left as they are.
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
    // checkInherited: an @Idempotent on an interface method or a superclass counts, as the route scan finds it
    DefaultPointcutAdvisor advisor =
        new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Idempotent.class, true), mark);
    advisor.setOrder(Ordered.LOWEST_PRECEDENCE);
    return advisor;
  }

  /** Proxies the beans with {@code @Idempotent} methods, and only them, adding the mark innermost. */
  public static final class PostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
    private static final long serialVersionUID = 1L;

    public PostProcessor() {
      this.advisor = advisor();
      setProxyTargetClass(true);
      setBeforeExistingAdvisors(false);
    }
  }
}
