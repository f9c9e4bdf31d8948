package dev.idem.spring.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.console.ConsoleAuthorizer;
import dev.idem.test.DocSnippets;
import dev.idem.test.TestPostgres;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.Principal;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * docs/console.md's Spring Boot authorizer, compiled here as a bean of a running application on PostgreSQL: nobody
 * signed in gets 401, a user without the role 403, an operator the console under their own name; and a check that the
 * guide shows exactly this bean. The application's sign-in stands in as a filter that names the user (and the role)
 * from test headers, as Spring Security would from a session.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleGuideStarterTest {
  private static final Path SELF = Path.of("src/test/java/dev/idem/spring/console/ConsoleGuideStarterTest.java");

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class GuideApp {
    // docs/console.md:begin spring
    @Bean
    ConsoleAuthorizer consoleAuthorizer() {
      return request -> {
        Principal user = request.getUserPrincipal();
        if (user == null) {
          return ConsoleAuthorizer.Decision.unauthenticated("sign in first");
        }
        return request.isUserInRole("OPERATOR") ? ConsoleAuthorizer.Decision.allow(user.getName())
            : ConsoleAuthorizer.Decision.forbidden(user.getName() + " is not an operator");
      };
    }
    // docs/console.md:end spring

    /** The test's sign-in: {@code X-Test-User} names the user, {@code X-Test-Role} gives a role. */
    @Bean
    OncePerRequestFilter testSignIn() {
      return new OncePerRequestFilter() {
        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
          String user = request.getHeader("X-Test-User");
          String role = request.getHeader("X-Test-Role");
          chain.doFilter(user == null ? request : new HttpServletRequestWrapper(request) {
            @Override
            public Principal getUserPrincipal() {
              return () -> user;
            }

            @Override
            public boolean isUserInRole(String r) {
              return r.equals(role);
            }
          }, response);
        }
      };
    }
  }

  private ConfigurableApplicationContext context;
  private HttpClient http;
  private int port;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(GuideApp.class).run("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=" + TestPostgres.url(), "--spring.datasource.username=" + TestPostgres.user(),
        "--spring.datasource.password=", "--spring.datasource.hikari.maximum-pool-size=4",
        "--idem.store.table=" + ConsoleStarterTest.RECORDS, "--idem.store.initialize-schema=true");
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  @Test
  void theGuidesAuthorizerLetsInOperatorsOnlyUnderTheirOwnName() throws Exception {
    HttpResponse<String> nobody = session(Map.of());
    HttpResponse<String> customer = session(Map.of("X-Test-User", "carol"));
    HttpResponse<String> operator = session(Map.of("X-Test-User", "dave", "X-Test-Role", "OPERATOR"));

    assertThat(nobody.statusCode()).isEqualTo(401);
    assertThat(nobody.body()).contains("AUTH.unauthenticated", "sign in first");
    assertThat(customer.statusCode()).isEqualTo(403);
    assertThat(customer.body()).contains("CONSOLE.forbidden", "carol is not an operator");
    assertThat(operator.statusCode()).as(operator.body()).isEqualTo(200);
    assertThat(operator.body()).contains("\"operator\":\"dave\"");
  }

  @Test
  void theGuideShowsThisBean() {
    String bean = DocSnippets.regions(SELF, "docs/console.md").get("spring");
    assertThat(bean).contains("ConsoleAuthorizer consoleAuthorizer()");
    assertThat(DocSnippets.javaBlocks(Path.of("../docs/console.md"))).contains(bean);
  }

  private HttpResponse<String> session(Map<String, String> headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port
        + "/idem/console/api/session"));
    headers.forEach(request::header);
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
