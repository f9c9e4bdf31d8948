package dev.idem.spring.tracing;

import dev.idem.spring.Idempotent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application with one idempotent route and a stand-in for the application's tracing: a filter that continues the
 * caller's W3C trace context in a SERVER span, current around the filter chain, as Spring Boot's tracing does. Ended
 * server spans go to {@link #serverSpans()}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(TracingApp.Payments.class)
public class TracingApp {
  private final BlockingQueue<SpanData> serverSpans = new LinkedBlockingQueue<>();

  /** The server spans, each added when its request has ended. */
  @Bean
  BlockingQueue<SpanData> serverSpans() {
    return serverSpans;
  }

  @Bean(destroyMethod = "close")
  OpenTelemetrySdk openTelemetry() {
    return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder().build()).build();
  }

  @Bean
  FilterRegistrationBean<Filter> serverSpanFilter(OpenTelemetrySdk openTelemetry) {
    Tracer tracer = openTelemetry.getTracer("test-server");
    TextMapGetter<HttpServletRequest> getter = new TextMapGetter<>() {
      @Override
      public Iterable<String> keys(HttpServletRequest request) {
        return Collections.list(request.getHeaderNames());
      }

      @Override
      public String get(HttpServletRequest request, String name) {
        return request == null ? null : request.getHeader(name);
      }
    };
    FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>((req, res, chain) -> {
      HttpServletRequest http = (HttpServletRequest) req;
      Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), http, getter);
      Span span = tracer.spanBuilder(http.getMethod() + " " + http.getRequestURI()).setSpanKind(SpanKind.SERVER)
          .setParent(parent).startSpan();
      Scope scope = span.makeCurrent();
      try {
        chain.doFilter(req, res);
      } finally {
        scope.close();
        span.end();
        serverSpans.add(((ReadableSpan) span).toSpanData());
      }
    });
    registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
    return registration;
  }

  /** One idempotent route. */
  @RestController
  public static class Payments {
    @PostMapping("/payments")
    @Idempotent(ttl = "1h")
    public ResponseEntity<Map<String, Object>> pay(@RequestBody Map<String, Object> body) {
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", "pay_" + UUID.randomUUID()));
    }
  }
}
