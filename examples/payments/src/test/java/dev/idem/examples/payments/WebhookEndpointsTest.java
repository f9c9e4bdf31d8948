package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.examples.payments.web.ApiProblem;
import dev.idem.examples.payments.webhook.JdbcWebhookEndpoints;
import dev.idem.examples.payments.webhook.NewWebhookEndpoint;
import dev.idem.outbox.webhook.WebhookEndpoint;
import java.net.URI;
import java.sql.Connection;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/** The endpoints table behind the webhook transport, on an in-memory H2 database, without HTTP. */
class WebhookEndpointsTest {
  private final JdbcDataSource ds = database();
  private final JdbcWebhookEndpoints endpoints = new JdbcWebhookEndpoints(ds, Clock.systemUTC(), 2);

  @Test
  void aTenantHasAtMostTheLimitOfEnabledEndpointsAndADisabledOneFreesItsPlace() throws Exception {
    String first = endpoints.create("alice", request("payment.succeeded")).endpoint().id();
    endpoints.create("alice", request("*"));

    assertThatThrownBy(() -> endpoints.create("alice", request("*"))).isInstanceOfSatisfying(ApiProblem.class,
        p -> assertThat(p.problem().code()).isEqualTo("VALIDATION.webhook_endpoint_limit"));
    assertThat(endpoints.create("bob", request("*")).endpoint().tenant()).as("limits are per tenant").isEqualTo("bob");
    endpoints.disable(first, "answered 410 Gone");
    assertThat(endpoints.create("alice", request("*")).endpoint().enabled()).isTrue();
    assertThat(endpoints.list("alice")).hasSize(3);
  }

  @Test
  void theTransportSeesTheSecretAndTheDisabledFlag() throws Exception {
    JdbcWebhookEndpoints.Created created = endpoints.create("alice", request("refund.succeeded"));
    String id = created.endpoint().id();

    WebhookEndpoint before = endpoints.find(id).orElseThrow();
    endpoints.disable(id, "answered 410 Gone to event e1");
    WebhookEndpoint after = endpoints.find(id).orElseThrow();

    assertThat(before.enabled()).isTrue();
    assertThat(before.secrets()).containsExactly(created.secret());
    assertThat(before.url()).isEqualTo(URI.create("http://127.0.0.1:9/hook"));
    assertThat(after.enabled()).isFalse();
    assertThat(endpoints.find("alice", id).orElseThrow().disabledReason()).isEqualTo("answered 410 Gone to event e1");
    assertThat(endpoints.find("bob", id)).as("another tenant does not see it").isEmpty();
    assertThat(endpoints.find("we_missing")).isEmpty();
  }

  @Test
  void subscribersAreTheEnabledEndpointsOfTheTenantThatReceiveTheType() throws Exception {
    String payments = endpoints.create("alice", request("payment.succeeded")).endpoint().id();
    String everything = endpoints.create("alice", request("*")).endpoint().id();
    endpoints.create("bob", request("*"));

    try (Connection c = ds.getConnection()) {
      assertThat(endpoints.subscribers(c, "alice", "payment.succeeded")).containsExactlyInAnyOrder(payments,
          everything);
      assertThat(endpoints.subscribers(c, "alice", "refund.succeeded")).containsExactly(everything);
      endpoints.disable(everything, "gone");
      assertThat(endpoints.subscribers(c, "alice", "refund.succeeded")).isEmpty();
      assertThat(endpoints.subscribers(c, "carol", "payment.succeeded")).isEmpty();
    }
  }

  private static NewWebhookEndpoint request(String... events) {
    return new NewWebhookEndpoint(URI.create("http://127.0.0.1:9/hook"), List.of(events));
  }

  private static JdbcDataSource database() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:endpoints-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    PaymentsSchema.createIfMissing(ds);
    return ds;
  }
}
