package dev.idem.spring.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter notes when an {@code @Idempotent} method starts also when the annotation is on an interface, so that
 * the method's own 4xx is kept while Spring's refusal before it is not; and a method a class proxy cannot intercept
 * fails startup instead of never being noted.
 */
class HandlerStartProxyTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void anInterfaceAnnotatedMethodIsNotedSoItsOwnRefusalIsKeptAndSpringsIsNot() throws Exception {
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(InterfaceApp.class).run(
        "--server.port=0", "--server.address=127.0.0.1", "--idem.filter.scope-header=X-Tenant",
        "--spring.datasource.url=jdbc:h2:mem:iface-" + UUID.randomUUID(), "--idem.store.initialize-schema=true")) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      String refusedKey = "k-" + UUID.randomUUID();
      String ownKey = "k-" + UUID.randomUUID();

      HttpResponse<String> springRefusal = post(port, refusedKey, null, "{\"name\":\"a\",\"count\":1}");
      HttpResponse<String> corrected = post(port, refusedKey, "application/json", "{\"name\":\"a\",\"count\":1}");
      HttpResponse<String> own = post(port, ownKey, "application/json", "{\"name\":\"a\",\"count\":0}");
      HttpResponse<String> ownAgain = post(port, ownKey, "application/json", "{\"name\":\"a\",\"count\":0}");

      assertThat(springRefusal.statusCode()).isEqualTo(415);
      assertThat(springRefusal.headers().firstValue("Idempotency-Status")).isEmpty();
      assertThat(corrected.statusCode()).isEqualTo(201);
      assertThat(corrected.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(own.statusCode()).isEqualTo(422);
      assertThat(own.headers().firstValue("Idempotency-Status")).as("the method's own 4xx is kept").hasValue("stored");
      assertThat(ownAgain.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    }
  }

  @Test
  void aFinalIdempotentMethodFailsStartupNamingIt() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(FinalMethodApp.class).run("--server.port=0",
        "--spring.datasource.url=jdbc:h2:mem:final-" + UUID.randomUUID(), "--idem.store.initialize-schema=true")
        .close())
        .hasStackTraceContaining("FinalMethodApp$Sealed.create")
        .hasStackTraceContaining("not final, private or static");
  }

  private HttpResponse<String> post(int port, String key, String contentType, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/things"))
        .header("X-Tenant", "alice").header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
