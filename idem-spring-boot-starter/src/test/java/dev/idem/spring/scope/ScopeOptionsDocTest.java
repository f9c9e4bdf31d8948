package dev.idem.spring.scope;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Scope;
import dev.idem.servlet.spi.ScopeResolver;
import dev.idem.spring.Idempotent;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The three ways to give idempotent requests a scope, as docs/http.md ("Who owns a key") shows them: each one is
 * compiled here, started, and sent a request with its credential (201, kept) and one without (401). The page must show
 * exactly this code.
 */
class ScopeOptionsDocTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @RestController
  static class Notes {
    @PostMapping("/notes")
    @Idempotent
    public Map<String, String> create() {
      return Map.of("id", "note_" + UUID.randomUUID());
    }
  }

  /** 1: the authenticated principal (the default); here a small filter of the application's own sets it. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Notes.class)
  static class PrincipalApp {
    // docs/http.md:begin principal
    @Bean
    FilterRegistrationBean<Filter> apiKeyAuthentication() {
      FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>((request, response, chain) -> {
        HttpServletRequest http = (HttpServletRequest) request;
        String tenant = http.getHeader("X-Api-Key"); // look the key up in your own table instead
        if (tenant == null) {
          chain.doFilter(request, response);
          return;
        }
        Principal principal = () -> tenant;
        chain.doFilter(new HttpServletRequestWrapper(http) {
          @Override
          public Principal getUserPrincipal() {
            return principal;
          }
        }, response);
      });
      registration.setOrder(-100); // before the idempotency filter (idem.filter.order, 0)
      return registration;
    }
    // docs/http.md:end principal
  }

  /** 2: nothing but the property (idem.filter.scope-header), given when the test starts it. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Notes.class)
  static class GatewayApp {}

  /** 3: a ScopeResolver bean of the application's own. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Notes.class)
  static class ResolverApp {
    // docs/http.md:begin resolver
    @Bean
    ScopeResolver scopeResolver() {
      return request -> Optional.ofNullable(request.getHeader("X-Api-Key"))
          .map(apiKey -> Scope.of("tenant-" + apiKey)); // map the key to its tenant in your own table instead
    }
    // docs/http.md:end resolver
  }

  @Test
  void theAuthenticatedPrincipal() throws Exception {
    check(PrincipalApp.class, "X-Api-Key", List.of());
  }

  @Test
  void aHeaderThatATrustedGatewaySets() throws Exception {
    check(GatewayApp.class, "X-Tenant-Id", List.of("--idem.filter.scope-header=X-Tenant-Id"));
  }

  @Test
  void aScopeResolverBean() throws Exception {
    check(ResolverApp.class, "X-Api-Key", List.of());
  }

  private void check(Class<?> app, String credential, List<String> extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:scope-" + UUID.randomUUID(), "--idem.store.initialize-schema=true"));
    args.addAll(extra);
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(app).run(args.toArray(String[]::new))) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpResponse<String> with = post(port, credential);
      HttpResponse<String> without = post(port, null);

      assertThat(with.statusCode()).isEqualTo(200);
      assertThat(with.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(without.statusCode()).isEqualTo(401);
    }
  }

  private HttpResponse<String> post(int port, String credential) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/notes"))
        .header("Idempotency-Key", "k-" + UUID.randomUUID()).POST(HttpRequest.BodyPublishers.noBody());
    if (credential != null) {
      b.header(credential, "alice");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void thePageShowsExactlyThisCodeAndTheProperty() throws Exception {
    String page = Files.readString(Path.of("../docs/http.md"));
    String source = Files.readString(Path.of("src/test/java/dev/idem/spring/scope/ScopeOptionsDocTest.java"));

    for (String region : List.of("principal", "resolver")) {
      String code = region(source, region);
      assertThat(code.lines().count()).as(region).isGreaterThan(3);
      assertThat(page).as(region).contains(code);
    }
    assertThat(page).contains("idem.filter.scope-header=X-Tenant-Id");
  }

  /** The lines between the region's markers, less the four spaces of indentation they have here. */
  private static String region(String source, String name) {
    List<String> lines = new ArrayList<>();
    boolean in = false;
    for (String line : source.split("\n")) {
      if (line.strip().equals("// docs/http.md:end " + name)) {
        break;
      }
      if (in) {
        lines.add(line.length() >= 4 ? line.substring(4) : line.strip());
      }
      in |= line.strip().equals("// docs/http.md:begin " + name);
    }
    return String.join("\n", lines);
  }
}
