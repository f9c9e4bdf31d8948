package dev.idem.outbox.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.outbox.webhook.WebhookVerificationException;
import dev.idem.outbox.webhook.WebhookVerificationException.Reason;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * Fuzzes {@link WebhookVerifier} and its {@code webhook-signature} header parser: hostile headers never raise
 * anything but {@link WebhookVerificationException}, and no change to a valid signature header, id, timestamp or body
 * is accepted unless the header still carries the exact valid signature. (The comparison itself is
 * {@code MessageDigest.isEqual}, constant time.)
 */
@AddLifecycleHook(FuzzTries.class)
class WebhookSignatureFuzzTest {
  private static final long NOW = 1_767_225_600L;
  private static final WebhookSecret SECRET = WebhookSecret.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  private static final WebhookVerifier VERIFIER = WebhookVerifier.builder(SECRET)
      .clock(Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC)).build();
  private static final WebhookSigner SIGNER = WebhookSigner.of(SECRET);
  private static final String BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";

  @Property(tries = 15_000)
  void hostileHeadersAreRefusedWithAReasonNeverAnotherException(@ForAll("ids") String id,
      @ForAll("timestamps") String timestamp, @ForAll("hostileHeaders") String header, @ForAll byte[] body) {
    Throwable thrown = catchThrowable(() -> VERIFIER.verify(id, timestamp, header, body));

    assertThat(thrown).isExactlyInstanceOf(WebhookVerificationException.class);
    assertThat(((WebhookVerificationException) thrown).reason()).isNotNull();
  }

  @Property(tries = 15_000)
  void noMutationOfAValidSignatureIsAccepted(@ForAll("ids") String id, @ForAll("bodies") byte[] body,
      @ForAll long seed) {
    String valid = SIGNER.sign(id, NOW, body);
    String mutated = mutate(valid, new Random(seed));
    assertThatCode(() -> VERIFIER.verify(id, Long.toString(NOW), valid, body)).doesNotThrowAnyException();

    Throwable thrown = catchThrowable(() -> VERIFIER.verify(id, Long.toString(NOW), mutated, body));

    if (Arrays.asList(mutated.split(" ")).contains(valid)) {
      assertThat(thrown).as(mutated).isNull();
    } else {
      assertThat(thrown).as("accepted %s, a mutation of %s", mutated, valid)
          .isExactlyInstanceOf(WebhookVerificationException.class);
      assertThat(((WebhookVerificationException) thrown).reason())
          .isIn(Reason.SIGNATURE_MISMATCH, Reason.MALFORMED_HEADERS);
    }
  }

  @Property(tries = 5_000)
  void aValidSignatureDoesNotCoverAnotherIdTimestampOrBody(@ForAll("ids") String id, @ForAll("bodies") byte[] body,
      @ForAll("ids") String otherId, @ForAll("bodies") byte[] otherBody, @ForAll("offsets") int seconds) {
    String header = SIGNER.sign(id, NOW, body);

    if (!otherId.equals(id)) {
      assertRefused(otherId, Long.toString(NOW), header, body);
    }
    if (!Arrays.equals(otherBody, body)) {
      assertRefused(id, Long.toString(NOW), header, otherBody);
    }
    if (seconds != 0) {
      assertRefused(id, Long.toString(NOW + seconds), header, body);
    }
  }

  private static void assertRefused(String id, String timestamp, String header, byte[] body) {
    Throwable thrown = catchThrowable(() -> VERIFIER.verify(id, timestamp, header, body));

    assertThat(thrown).isExactlyInstanceOf(WebhookVerificationException.class);
  }

  /** One to three edits: a character replaced, inserted or removed, case flipped, padding or text dropped. */
  static String mutate(String header, Random random) {
    StringBuilder sb = new StringBuilder(header);
    for (int n = 1 + random.nextInt(3); n > 0; n--) {
      int at = sb.length() == 0 ? 0 : random.nextInt(sb.length());
      char c = random.nextInt(3) == 0 ? (char) random.nextInt(0x250) : BASE64.charAt(random.nextInt(BASE64.length()));
      switch (random.nextInt(7)) {
        case 0:
          if (sb.length() > 0) {
            sb.setCharAt(at, c);
          }
          break;
        case 1:
          sb.insert(at, c);
          break;
        case 2:
          if (sb.length() > 0) {
            sb.deleteCharAt(at);
          }
          break;
        case 3:
          if (sb.length() > 0) {
            char x = sb.charAt(at);
            sb.setCharAt(at, Character.isUpperCase(x) ? Character.toLowerCase(x) : Character.toUpperCase(x));
          }
          break;
        case 4:
          int padding = sb.lastIndexOf("=");
          if (padding >= 0) {
            sb.deleteCharAt(padding);
          }
          break;
        case 5:
          sb.setLength(at);
          break;
        default:
          sb.insert(random.nextBoolean() ? 0 : sb.length(), random.nextBoolean() ? " " : "v1,");
      }
    }
    return sb.toString();
  }

  @Provide
  Arbitrary<String> ids() {
    return Arbitraries.oneOf(
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(40),
        Arbitraries.create(() -> "msg_" + java.util.UUID.randomUUID()));
  }

  @Provide
  Arbitrary<byte[]> bodies() {
    return Arbitraries.oneOf(
        Arbitraries.bytes().array(byte[].class).ofMaxSize(256),
        Arbitraries.strings().ofMaxLength(64).map(s -> s.getBytes(StandardCharsets.UTF_8)));
  }

  @Provide
  Arbitrary<Integer> offsets() {
    return Arbitraries.integers().between(-1000, 1000);
  }

  @Provide
  Arbitrary<String> timestamps() {
    return Arbitraries.oneOf(
        Arbitraries.just(Long.toString(NOW)),
        Arbitraries.longs().between(NOW - 400, NOW + 400).map(String::valueOf),
        Arbitraries.strings().numeric().ofMaxLength(14),
        Arbitraries.of("", "-1", "+" + NOW, " " + NOW, NOW + ".0", "0x10", "\u0661\u0662"),
        Arbitraries.strings().all().ofMaxLength(14));
  }

  /** Headers that hold no valid signature: random tokens, near-valid ones, oversized and overfull ones. */
  @Provide
  Arbitrary<String> hostileHeaders() {
    Arbitrary<String> base64 = Arbitraries.strings().withChars(BASE64.toCharArray()).ofMaxLength(50);
    Arbitrary<String> token = Arbitraries.frequencyOf(
        Tuple.of(4, base64.map(b -> "v1," + b)),
        Tuple.of(2, base64.map(b -> "v1a," + b)),
        Tuple.of(1, Arbitraries.longs().map(Random::new)
            .map(r -> mutate("v1," + Base64.getEncoder().encodeToString(bytes(r)), r))),
        Tuple.of(1, Arbitraries.strings().all().ofMaxLength(20)),
        Tuple.of(1, Arbitraries.of("v1,", ",", "v1", "V1,AAAA", "v1,,", "v1 ,x", "\u0000")));
    return Arbitraries.oneOf(
        token.list().ofMaxSize(4).map(parts -> String.join(" ", parts)),
        token.list().ofMinSize(15).ofMaxSize(40).map(parts -> String.join(random(parts.size()), parts)),
        Arbitraries.strings().withChars(" v1,A=").ofMinLength(4000).ofMaxLength(4200),
        Arbitraries.strings().all().ofMaxLength(100));
  }

  private static byte[] bytes(Random random) {
    byte[] b = new byte[32];
    random.nextBytes(b);
    return b;
  }

  private static String random(int size) {
    return List.of(" ", "  ", "\t", " ").get(size % 4);
  }
}
