package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.ServiceOfItsOwn;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Security: a webhook endpoint's URL is judged by one reading of its host, through {@code POST /webhook-endpoints}
 * on the service as it ships ({@code payments.webhooks.allow-private-addresses=false}). A numeric host that parsers
 * read as different addresses (octal, hex, shortened, one number, a trailing dot) is refused as written, and an
 * address in any IANA special-purpose range is refused by its range; each answer is a 400 {@code VALIDATION.url}
 * problem whose detail names the rule, and no endpoint is created. Every URL is a literal, so nothing asks DNS; the
 * tenant here never pays, so no event would be written even for an endpoint a broken check let through. Runs on an
 * H2 file database; {@link PostgresWebhookUrlHostsTest} runs it on PostgreSQL.
 */
class WebhookUrlHostsTest extends ServiceOfItsOwn {
  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final Caller tenant = new Caller("sk_hosts_" + run, "hosts_" + run);

  @Override
  protected List<String> arguments() {
    return List.of(tenant.argument(), "--payments.webhooks.allow-private-addresses=false");
  }

  @AfterEach
  void noEndpointWasCreated() {
    Answer list = service.get("/webhook-endpoints", tenant.apiKey());
    assertThat(list.status()).as(list.toString()).isEqualTo(200);
    assertThat(list.json().path("webhook_endpoints").size()).as(list.toString()).isZero();
    assertThat(service.count("SELECT COUNT(*) FROM pay_webhook_endpoint WHERE tenant = ?", tenant.tenant())).isZero();
  }

  @Test
  void ambiguousNumericHostsAre400NamingTheRule() {
    List<String> urls = List.of("http://0177.0.0.1/x", "http://127.1/x", "http://127.0.1/x", "http://0x7f.0.0.1/x",
        "http://0X7F.0.0.1/x", "http://0x7f.1/x", "http://2130706433/x", "http://127.0.0.01/x",
        "http://0177.0.0.1:8080/x", "http://user@0177.0.0.1/x", "https://0177.0.0.1/x", "http://127.0.0.1./x",
        "http://127.1.:8080/x", "http://1.2.3.4.5/x", "http://256.0.0.1/x", "http://%31%32%37.1/x",
        "http://\uff11\uff12\uff17.0.0.1/x", "http://127\u30020\u30020\u30021/x");

    for (String url : urls) {
      Answer a = create(url);

      assertThat(a.status()).as(url + ": " + a.json().path("detail").asString()).isEqualTo(400);
      assertThat(a.header("Content-Type")).as(url).isEqualTo("application/problem+json");
      assertThat(a.code()).as(url).isEqualTo("VALIDATION.url");
      assertThat(a.json().path("detail").asString()).as(url).contains("ambiguous numeric form")
          .contains("four decimal numbers");
    }
  }

  @Test
  void specialPurposeAddressesAre400NamingTheirRange() {
    Map<String, String> ranges = new LinkedHashMap<>();
    ranges.put("198.18.0.1", "198.18.0.0/15 (benchmarking)");
    ranges.put("198.19.255.254", "198.18.0.0/15 (benchmarking)");
    ranges.put("192.0.2.1", "192.0.2.0/24 (documentation");
    ranges.put("198.51.100.1", "198.51.100.0/24 (documentation");
    ranges.put("203.0.113.1", "203.0.113.0/24 (documentation");
    ranges.put("192.0.0.9", "192.0.0.0/24 (");
    ranges.put("192.31.196.1", "192.31.196.0/24 (");
    ranges.put("192.52.193.1", "192.52.193.0/24 (");
    ranges.put("192.88.99.1", "192.88.99.0/24 (");
    ranges.put("192.175.48.1", "192.175.48.0/24 (");
    ranges.put("100.64.0.1", "100.64.0.0/10 (");
    ranges.put("240.0.0.1", "240.0.0.0/4 (reserved)");
    ranges.put("255.255.255.255", "255.255.255.255/32 (limited broadcast)");
    ranges.put("224.0.0.1", "224.0.0.0/4 (multicast)");
    ranges.put("0.0.0.0", "0.0.0.0/8 (");
    ranges.put("127.0.0.1:9", "127.0.0.0/8 (loopback)");
    ranges.put("10.0.0.1", "10.0.0.0/8 (private)");
    ranges.put("172.16.0.1", "172.16.0.0/12 (private)");
    ranges.put("192.168.0.1", "192.168.0.0/16 (private)");
    ranges.put("169.254.169.254", "169.254.0.0/16 (link-local");
    ranges.put("[::1]:9", "::1/128 (loopback)");
    ranges.put("[::]", "::/128 (");
    ranges.put("[::ffff:198.18.0.1]", "198.18.0.0/15 (benchmarking)");
    ranges.put("[::ffff:a9fe:a9fe]", "169.254.0.0/16 (link-local");
    ranges.put("[64:ff9b::c612:1]", "64:ff9b::/96 (");
    ranges.put("[64:ff9b:1::1]", "64:ff9b:1::/48 (");
    ranges.put("[100::1]", "100::/64 (");
    ranges.put("[2001::1]", "2001::/23 (");
    ranges.put("[2001:db8::1]", "2001:db8::/32 (documentation)");
    ranges.put("[2002:c612:1::1]", "2002::/16 (6to4)");
    ranges.put("[3fff::1]", "3fff::/20 (documentation)");
    ranges.put("[5f00::1]", "5f00::/16 (");
    ranges.put("[fc00::1]", "fc00::/7 (unique-local)");
    ranges.put("[fe80::1]", "fe80::/10 (link-local)");
    ranges.put("[ff02::1]", "ff00::/8 (multicast)");
    ranges.put("[::127.0.0.1]", "outside 2000::/3 (");

    ranges.forEach((host, range) -> {
      String url = "http://" + host + "/x";
      Answer a = create(url);

      assertThat(a.status()).as(url + ": " + a.json().path("detail").asString()).isEqualTo(400);
      assertThat(a.header("Content-Type")).as(url).isEqualTo("application/problem+json");
      assertThat(a.code()).as(url).isEqualTo("VALIDATION.url");
      assertThat(a.json().path("detail").asString()).as(url).contains(range).contains("special-purpose");
    });
  }

  private Answer create(String url) {
    String json = "{\"url\":\"" + url.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\"events\":[\"*\"]}";
    return service.post("/webhook-endpoints", tenant.apiKey(), null, json);
  }
}
