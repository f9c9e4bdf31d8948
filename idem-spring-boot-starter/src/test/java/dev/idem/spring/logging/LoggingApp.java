package dev.idem.spring.logging;

import dev.idem.core.Checkpoint;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.StoredResponse;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application whose tenants authenticate with secret API keys ({@code Authorization: Bearer sk_secret_...}), with
 * an atomic route that logs while it runs, a phased route, an asynchronous route and a plain route, for the logging
 * test.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(LoggingApp.Notes.class)
public class LoggingApp {
  /** The one API key, a secret that must never reach a log line. */
  public static final String API_KEY = "sk_secret_4f9a2c71e0";
  /** The problem code of the asynchronous route's answer. */
  public static final String ASYNC_CODE = "CONFLICT.notes.async";
  /** The tenant the key belongs to. */
  public static final String TENANT = "alice";

  private static final Logger LOG = LoggerFactory.getLogger(LoggingApp.class);

  @Bean
  FilterRegistrationBean<Filter> apiKeys() {
    FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>((req, res, chain) -> {
      HttpServletRequest http = (HttpServletRequest) req;
      if (!("Bearer " + API_KEY).equals(http.getHeader("Authorization"))) {
        chain.doFilter(req, res);
        return;
      }
      Principal tenant = () -> TENANT;
      chain.doFilter(new HttpServletRequestWrapper(http) {
        @Override
        public Principal getUserPrincipal() {
          return tenant;
        }
      }, res);
    });
    r.setOrder(-100);
    return r;
  }

  @Bean
  PhasedOperation jobOperation() {
    return PhasedOperation.builder("POST /jobs")
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("id", "job_1")))
        .outside("run", ctx -> {
          LOG.info("running job {}", ctx.checkpoint().require("id"));
          return PhaseResult.next(ctx.checkpoint());
        })
        .inTransaction("done", ctx -> PhaseResult.respond(StoredResponse.json(201, "{\"id\":\"job_1\"}")))
        .build();
  }

  /** The routes. */
  @RestController
  public static class Notes {

    @PostMapping("/notes")
    @Idempotent
    public ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> body) {
      LOG.info("creating a note of {} characters", String.valueOf(body.get("text")).length());
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", "note_1"));
    }

    @PostMapping("/jobs")
    @Idempotent(mode = IdempotentRoute.Mode.PHASED)
    public void job(HttpServletRequest request, HttpServletResponse response) throws IOException {
      dev.idem.servlet.IdempotentExchange.current(request).phased(response);
    }

    /**
     * An asynchronous route: its problem answer is written on an async dispatch, after the MDC filter has returned,
     * on whichever thread the container picks.
     */
    @PostMapping("/async-problems")
    public Callable<ResponseEntity<String>> asyncProblem() {
      return () -> ResponseEntity.status(HttpStatus.CONFLICT).contentType(MediaType.APPLICATION_PROBLEM_JSON)
          .body("{\"type\":\"about:blank\",\"code\":\"" + ASYNC_CODE + "\",\"status\":409}");
    }

    /** Logs {@code ping}, or {@code ping <tag>} for a test that looks for its own line. */
    @GetMapping("/ping")
    public Map<String, Object> ping(@RequestParam(required = false) String tag) {
      LOG.info(tag == null ? "ping" : "ping " + tag);
      return Map.of("pong", true);
    }
  }
}
