package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bound on requests in flight is checked against the pool when the service starts: an idempotent request may
 * hold two connections at once, so a bound that the pool (less the connections kept for background work) cannot give
 * two each stops the service with a message naming the properties; unset, the bound is derived from the pool.
 */
class InFlightLimitSettingsTest {
  @TempDir
  Path data;

  @Test
  void aBoundThePoolCannotServeStopsTheStart() {
    assertThatThrownBy(() -> start("--payments.admission.max-in-flight=9"))
        .hasStackTraceContaining("payments.admission.max-in-flight (9)")
        .hasStackTraceContaining("spring.datasource.hikari.maximum-pool-size (20)");
  }

  @Test
  void aPoolTooSmallForItsReserveStopsTheStart() {
    assertThatThrownBy(() -> start("--spring.datasource.hikari.maximum-pool-size=5"))
        .hasStackTraceContaining("spring.datasource.hikari.maximum-pool-size (5)")
        .hasStackTraceContaining("payments.admission.reserved-connections (4)");
  }

  @Test
  void unsetTheBoundIsWhatThePoolServesTwoConnectionsEach() {
    try (RunningService service = start("--spring.datasource.hikari.maximum-pool-size=31")) {
      Answer limit = service.get("/actuator/metrics/payments.requests.in_flight.max", null);
      assertThat(limit.status()).as(limit.toString()).isEqualTo(200);
      // (31 - 4 kept for background work) / 2 connections per request
      assertThat(limit.json().path("measurements").get(0).path("value").asDouble()).isEqualTo(13);
    }
  }

  private RunningService start(String... args) {
    List<String> all = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--payments.outbox.enabled=false"));
    all.addAll(List.of(args));
    return RunningService.start(all.toArray(String[]::new));
  }
}
