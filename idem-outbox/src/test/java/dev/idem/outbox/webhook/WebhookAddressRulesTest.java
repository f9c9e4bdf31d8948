package dev.idem.outbox.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The address rules of webhook endpoints, table by table: which host texts are ambiguous numeric forms, and which
 * addresses fall in an IANA special-purpose range. Only literals: nothing here asks DNS.
 */
class WebhookAddressRulesTest {

  @ParameterizedTest
  @ValueSource(strings = {
      "0177.0.0.1", "0x7f.0.0.1", "0X7F.0.0.1", "0x7f000001", "0x7F000001", "127.1", "127.0.1", "2130706433",
      "017700000001", "127.0.0.01", "127.00.0.1", "0127.0.0.1", "0.0.0.00", "0x7f.1", "0177.1", "127.0x0.0.1",
      "0x7f.0.0.0x1", "127.0.0.1.", "127.0.0.1..", "127.1.", "2130706433.", "1.2.3.4.5", "256.0.0.1", "1.2.3.256",
      "1.2.3.4294967296", "example.123", "example.0x1", "example.1.", "0x", "0X", "0", "00", "4294967295",
      "4294967296", "99999999999999999999", "..1", "\uff11\uff12\uff17.0.0.1", "127\u30020\u30020\u30021",
      "127\uff0e0\uff0e0\uff0e1", "127.0.0.\uff11"})
  void ambiguousNumericHostsAreRefused(String host) {
    assertThat(WebhookTransport.isAmbiguousHost(host)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "127.0.0.1", "0.0.0.0", "255.255.255.255", "198.18.0.1", "8.8.8.8", "10.0.0.1", "100.64.0.1", "localhost",
      "localhost.", "example.com", "example.com.", "123.example", "1e100.net", "0x7f.example", "a.0x7fz", "1.2.3.x",
      "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[2001:db8::1]", "[fe80::1%25eth0]", "xn--nxasmq6b.example"})
  void namesCanonicalIpv4AndBracketedIpv6AreJudgedByAddress(String host) {
    assertThat(WebhookTransport.isAmbiguousHost(host)).isFalse();
  }

  @ParameterizedTest
  @CsvSource({
      "0.0.0.0,          0.255.255.255,   0.0.0.0/8",
      "10.0.0.0,         10.255.255.255,  10.0.0.0/8",
      "100.64.0.0,       100.127.255.255, 100.64.0.0/10",
      "127.0.0.0,        127.255.255.255, 127.0.0.0/8",
      "169.254.0.0,      169.254.255.255, 169.254.0.0/16",
      "172.16.0.0,       172.31.255.255,  172.16.0.0/12",
      "192.0.0.0,        192.0.0.255,     192.0.0.0/24",
      "192.0.2.0,        192.0.2.255,     192.0.2.0/24",
      "192.31.196.0,     192.31.196.255,  192.31.196.0/24",
      "192.52.193.0,     192.52.193.255,  192.52.193.0/24",
      "192.88.99.0,      192.88.99.255,   192.88.99.0/24",
      "192.168.0.0,      192.168.255.255, 192.168.0.0/16",
      "192.175.48.0,     192.175.48.255,  192.175.48.0/24",
      "198.18.0.0,       198.19.255.255,  198.18.0.0/15",
      "198.51.100.0,     198.51.100.255,  198.51.100.0/24",
      "203.0.113.0,      203.0.113.255,   203.0.113.0/24",
      "224.0.0.0,        239.255.255.255, 224.0.0.0/4",
      "240.0.0.0,        255.255.255.254, 240.0.0.0/4",
      "255.255.255.255,  255.255.255.255, 255.255.255.255/32",
      "::ffff:0.0.0.0,   ::ffff:0.0.0.1,  0.0.0.0/8",
      "::ffff:198.18.0.1, ::ffff:c613:ffff, 198.18.0.0/15",
      "::ffff:169.254.169.254, ::ffff:a9fe:a9fe, 169.254.0.0/16",
      "::,               ::,              ::/128",
      "::1,              ::1,             ::1/128",
      "64:ff9b::,        64:ff9b::ffff:ffff, 64:ff9b::/96",
      "64:ff9b::7f00:1,  64:ff9b::808:808, 64:ff9b::/96",
      "64:ff9b:1::,      64:ff9b:1:ffff:ffff:ffff:ffff:ffff, 64:ff9b:1::/48",
      "100::,            100::ffff:ffff:ffff:ffff, 100::/64",
      "100:0:0:1::,      100:0:0:1:ffff:ffff:ffff:ffff, 100:0:0:1::/64",
      "2001::,           2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff, 2001::/23",
      "2001:db8::,       2001:db8:ffff:ffff:ffff:ffff:ffff:ffff, 2001:db8::/32",
      "2002::,           2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 2002::/16",
      "2620:4f:8000::,   2620:4f:8000:ffff:ffff:ffff:ffff:ffff, 2620:4f:8000::/48",
      "3fff::,           3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff, 3fff::/20",
      "5f00::,           5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff, 5f00::/16",
      "fc00::,           fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, fc00::/7",
      "fe80::,           febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff, fe80::/10",
      "ff00::,           ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, ff00::/8",
      "::2,              1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, outside 2000::/3",
      "::127.0.0.1,      ::ffff:0:7f00:1, outside 2000::/3",
      "4000::,           fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff, outside 2000::/3",
      "fec0::1,          fe00::,          outside 2000::/3"})
  void everyAddressOfASpecialPurposeRangeIsRefusedWithTheRangeNamed(String first, String last, String range)
      throws UnknownHostException {
    for (String address : new String[] {first, last}) {
      assertThat(WebhookTransport.specialPurposeRange(literal(address))).as(address)
          .hasValueSatisfying(r -> assertThat(r).startsWith(range + " ("));
      assertThat(WebhookTransport.isInternalAddress(literal(address))).as(address).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "1.0.0.0", "8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
      "126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
      "191.255.255.255", "192.0.1.0", "192.0.3.0", "192.31.195.255", "192.31.197.0", "192.52.192.255",
      "192.52.194.0", "192.88.98.255", "192.88.100.0", "192.167.255.255", "192.169.0.0", "192.175.47.255",
      "192.175.49.0", "198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0",
      "223.255.255.255", "::ffff:8.8.8.8", "2000::", "2001:200::", "2001:db7:ffff::", "2001:db9::", "2003::",
      "2620:4f:7fff:ffff::", "2620:4f:8001::", "3ffe:ffff::", "3fff:1000::", "2001:4860:4860::8888",
      "2a00:1450:4001::1", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"})
  void globallyReachableAddressesAreAllowed(String address) throws UnknownHostException {
    assertThat(WebhookTransport.specialPurposeRange(literal(address))).isEmpty();
    assertThat(WebhookTransport.isInternalAddress(literal(address))).isFalse();
  }

  /** A literal address: {@link InetAddress#getByName} parses it without a look-up. */
  private static InetAddress literal(String address) throws UnknownHostException {
    assertThat(address).matches("[0-9a-fA-F:.]+");
    return InetAddress.getByName(address);
  }
}
