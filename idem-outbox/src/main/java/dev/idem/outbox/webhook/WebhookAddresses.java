package dev.idem.outbox.webhook;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.text.Normalizer;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The address rules of webhook endpoints: which host texts are ambiguous numeric forms, refused as written, and which
 * addresses fall in an IANA special-purpose range (the IPv4 and IPv6 Special-Purpose Address Registries, plus
 * multicast and, for IPv6, everything outside global unicast 2000::/3).
 */
final class WebhookAddresses {
  /** Why {@link #isAmbiguous} refuses a host, after "host ... ". */
  static final String AMBIGUOUS = "is an ambiguous numeric form: an IPv4 host must be four decimal numbers 0-255"
      + " without leading zeros (octal, hex, shortened and one-number forms are read as different addresses by"
      + " different parsers)";
  /** IPv4 ranges, most specific first: the first that holds an address names it. */
  private static final List<Range> IPV4 = List.of(
      range("0.0.0.0/8", "this network"),
      range("10.0.0.0/8", "private"),
      range("100.64.0.0/10", "shared address space, carrier-grade NAT"),
      range("127.0.0.0/8", "loopback"),
      range("169.254.0.0/16", "link-local, cloud metadata"),
      range("172.16.0.0/12", "private"),
      range("192.0.0.0/24", "IETF protocol assignments"),
      range("192.0.2.0/24", "documentation, TEST-NET-1"),
      range("192.31.196.0/24", "AS112-v4"),
      range("192.52.193.0/24", "AMT"),
      range("192.88.99.0/24", "deprecated 6to4 relay anycast"),
      range("192.168.0.0/16", "private"),
      range("192.175.48.0/24", "direct delegation AS112 service"),
      range("198.18.0.0/15", "benchmarking"),
      range("198.51.100.0/24", "documentation, TEST-NET-2"),
      range("203.0.113.0/24", "documentation, TEST-NET-3"),
      range("224.0.0.0/4", "multicast"),
      range("255.255.255.255/32", "limited broadcast"),
      range("240.0.0.0/4", "reserved"));
  /** IPv6 ranges, most specific first; IPv4-mapped addresses (::ffff:0:0/96) are judged as their IPv4 address. */
  private static final List<Range> IPV6 = List.of(
      range("::/128", "unspecified"),
      range("::1/128", "loopback"),
      range("64:ff9b::/96", "IPv4/IPv6 translation"),
      range("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
      range("100::/64", "discard-only"),
      range("100:0:0:1::/64", "dummy prefix"),
      range("2001::/23", "IETF protocol assignments"),
      range("2001:db8::/32", "documentation"),
      range("2002::/16", "6to4"),
      range("2620:4f:8000::/48", "direct delegation AS112 service"),
      range("3fff::/20", "documentation"),
      range("5f00::/16", "segment routing SIDs"),
      range("fc00::/7", "unique-local"),
      range("fe80::/10", "link-local"),
      range("ff00::/8", "multicast"));
  private static final Range GLOBAL_UNICAST = range("2000::/3", "global unicast");

  private WebhookAddresses() {}

  /**
   * Whether {@code host} looks like an IPv4 address (its last label, trailing dots aside, is a decimal number or
   * {@code 0x} and hex digits, as browsers judge it) but is not written as four decimal numbers 0-255 without leading
   * zeros: octal, hex, shortened and one-number forms, a trailing dot, fullwidth digits or ideographic dots. Parsers
   * read such hosts as different addresses (Java reads {@code 0177.0.0.1} as 177.0.0.1, curl and browsers as
   * 127.0.0.1), so no check of one reading is safe. Names and bracketed IPv6 literals are not ambiguous.
   */
  static boolean isAmbiguous(String host) {
    if (host == null || host.isEmpty() || host.startsWith("[")) {
      return false;
    }
    String mapped = Normalizer.normalize(host, Normalizer.Form.NFKC).replace('\u3002', '.')
        .toLowerCase(Locale.ROOT);
    int end = mapped.length();
    while (end > 0 && mapped.charAt(end - 1) == '.') {
      end--;
    }
    String last = mapped.substring(mapped.lastIndexOf('.', end - 1) + 1, end);
    return isNumber(last) && !isDottedDecimal(host);
  }

  /**
   * The special-purpose range that holds {@code a}, as {@code "<prefix> (<name>)"}, such as
   * {@code "198.18.0.0/15 (benchmarking)"}; empty for an address outside them all.
   */
  static Optional<String> range(InetAddress a) {
    byte[] b = a.getAddress();
    if (b.length == 16 && isMappedIpv4(b)) {
      b = Arrays.copyOfRange(b, 12, 16);
    }
    for (Range r : b.length == 4 ? IPV4 : IPV6) {
      if (r.contains(b)) {
        return Optional.of(r.toString());
      }
    }
    return b.length == 16 && !GLOBAL_UNICAST.contains(b)
        ? Optional.of("outside 2000::/3 (not global unicast: reserved by the IETF)") : Optional.empty();
  }

  private static boolean isMappedIpv4(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
  }

  /** A decimal number, or {@code 0x} followed by hex digits (none included), as the URL standard reads a label. */
  private static boolean isNumber(String label) {
    if (label.startsWith("0x")) {
      return label.chars().skip(2).allMatch(c -> c >= '0' && c <= '9' || c >= 'a' && c <= 'f');
    }
    return !label.isEmpty() && label.chars().allMatch(c -> c >= '0' && c <= '9');
  }

  private static boolean isDottedDecimal(String host) {
    String[] parts = host.split("\\.", -1);
    if (parts.length != 4) {
      return false;
    }
    for (String p : parts) {
      if (p.isEmpty() || p.length() > 3 || p.length() > 1 && p.charAt(0) == '0'
          || !p.chars().allMatch(c -> c >= '0' && c <= '9') || Integer.parseInt(p) > 255) {
        return false;
      }
    }
    return true;
  }

  private static Range range(String prefix, String name) {
    int slash = prefix.indexOf('/');
    try {
      // literals only: InetAddress parses them without a look-up
      byte[] address = InetAddress.getByName(prefix.substring(0, slash)).getAddress();
      return new Range(prefix, address, Integer.parseInt(prefix.substring(slash + 1)), name);
    } catch (UnknownHostException e) {
      throw new IllegalStateException(prefix, e);
    }
  }

  private record Range(String prefix, byte[] address, int bits, String name) {
    boolean contains(byte[] b) {
      if (b.length != address.length) {
        return false;
      }
      int whole = bits / 8;
      if (!Arrays.equals(b, 0, whole, address, 0, whole)) {
        return false;
      }
      int rest = bits % 8;
      int mask = (0xff << (8 - rest)) & 0xff;
      return rest == 0 || (b[whole] & mask) == (address[whole] & mask);
    }

    @Override
    public String toString() {
      return prefix + " (" + name + ")";
    }
  }
}
