package dev.idem.outbox.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.webhook.WebhookVerificationException.Reason;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The signature covers the {@code webhook-timestamp} bytes exactly as sent, never the parsed value re-formatted. */
class WebhookTimestampSignatureTest {
  private static final long NOW = 1_700_000_000L;
  private static final String ID = "msg_2b7c";
  private static final byte[] BODY = "{\"amount\":5}".getBytes(StandardCharsets.UTF_8);
  private static final WebhookSecret SECRET = WebhookSecret.parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  private static final WebhookVerifier VERIFIER = WebhookVerifier.builder(SECRET)
      .clock(Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC)).build();

  /** The Standard Webhooks signature over {@code id.timestamp.body}, computed here independently of the signer. */
  private static String signedOver(String timestamp) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET.key(), "HmacSHA256"));
    mac.update((ID + "." + timestamp + ".").getBytes(StandardCharsets.US_ASCII));
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal(BODY));
  }

  @Test
  void theSignersOutputVerifiesAndMatchesTheDocumentedScheme() throws GeneralSecurityException {
    String header = WebhookSigner.of(SECRET).sign(ID, NOW, BODY);

    assertThatCode(() -> VERIFIER.verify(ID, Long.toString(NOW), header, BODY)).doesNotThrowAnyException();
    assertThatCode(() -> VERIFIER.verify(ID, Long.toString(NOW), signedOver(Long.toString(NOW)), BODY))
        .doesNotThrowAnyException();
  }

  @Test
  void leadingZerosVerifyWhenSignedAsSent() throws GeneralSecurityException {
    String sent = "000" + NOW;
    String header = signedOver(sent);

    assertThatCode(() -> VERIFIER.verify(ID, sent, header, BODY)).doesNotThrowAnyException();
  }

  @Test
  void aSignatureOverTheReformattedValueDoesNotCoverLeadingZeros() throws GeneralSecurityException {
    String header = WebhookSigner.of(SECRET).sign(ID, NOW, BODY);

    for (String sent : new String[] {"0" + NOW, "0000" + NOW}) {
      assertThatThrownBy(() -> VERIFIER.verify(ID, sent, header, BODY))
          .isInstanceOfSatisfying(WebhookVerificationException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.SIGNATURE_MISMATCH));
    }
  }

  @Test
  void aSignatureOverLeadingZerosDoesNotCoverTheShortForm() throws GeneralSecurityException {
    String header = signedOver("0" + NOW);

    assertThatThrownBy(() -> VERIFIER.verify(ID, Long.toString(NOW), header, BODY))
        .isInstanceOfSatisfying(WebhookVerificationException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.SIGNATURE_MISMATCH));
  }

  @Test
  void theToleranceIsCheckedOnTheParsedValue() throws GeneralSecurityException {
    String sent = "000" + (NOW + 301);
    String header = signedOver(sent);

    assertThatThrownBy(() -> VERIFIER.verify(ID, sent, header, BODY))
        .isInstanceOfSatisfying(WebhookVerificationException.class,
            e -> assertThat(e.reason())
                .isEqualTo(Reason.TIMESTAMP_OUT_OF_TOLERANCE));
  }

  @Test
  void nonDigitTimestampsAreRefusedWithAClearReason() throws GeneralSecurityException {
    String[] notDigits = {"+" + NOW, " " + NOW, NOW + " ", NOW + ".0", "-" + NOW, "1e9", "\u0661\u0667\u0660\u0660",
        "\uff11\uff17\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10"};
    for (String sent : notDigits) {
      String header = signedOver(sent);
      assertThatThrownBy(() -> VERIFIER.verify(ID, sent, header, BODY))
          .as(sent)
          .isInstanceOfSatisfying(WebhookVerificationException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED_HEADERS))
          .hasMessageContaining("ASCII digits");
    }
  }

  @Test
  void overLongTimestampsAreRefusedWithAClearReason() throws GeneralSecurityException {
    String sent = "0".repeat(WebhookVerifier.MAX_TIMESTAMP_DIGITS + 1 - Long.toString(NOW).length()) + NOW;
    String header = signedOver(sent);

    assertThatThrownBy(() -> VERIFIER.verify(ID, sent, header, BODY))
        .isInstanceOfSatisfying(WebhookVerificationException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED_HEADERS))
        .hasMessageContaining("longer than " + WebhookVerifier.MAX_TIMESTAMP_DIGITS);
    String longest = sent.substring(1);
    assertThatCode(() -> VERIFIER.verify(ID, longest, signedOver(longest), BODY)).doesNotThrowAnyException();
  }
}
