package dev.idem.outbox.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.webhook.WebhookVerificationException.Reason;
import dev.idem.test.MutableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WebhookSignatureTest {
  // the reference vector published with the Standard Webhooks specification
  static final String SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  static final String SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  static final long SPEC_TIMESTAMP = 1614265330;
  static final byte[] SPEC_BODY = "{\"test\": 2432232314}".getBytes(StandardCharsets.UTF_8);
  static final String SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

  final MutableClock clock = new MutableClock(Instant.ofEpochSecond(SPEC_TIMESTAMP));
  final WebhookSecret current = WebhookSecret.generate();
  final WebhookSecret previous = WebhookSecret.generate();
  final byte[] body = "{\"type\":\"payment.succeeded\",\"amount\":1000}".getBytes(StandardCharsets.UTF_8);

  WebhookVerifier verifier(WebhookSecret... secrets) {
    return WebhookVerifier.builder(secrets).clock(clock).build();
  }

  String now() {
    return Long.toString(clock.instant().getEpochSecond());
  }

  @Test
  void signsAndVerifiesTheSpecificationsReferenceVector() {
    WebhookSecret secret = WebhookSecret.parse(SPEC_SECRET);
    assertThat(WebhookSigner.of(secret).sign(SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY)).isEqualTo(SPEC_SIGNATURE);
    assertThatCode(() -> verifier(secret).verify(SPEC_ID, Long.toString(SPEC_TIMESTAMP), SPEC_SIGNATURE, SPEC_BODY))
        .doesNotThrowAnyException();
    assertThat(secret.reveal()).isEqualTo(SPEC_SECRET);
  }

  @Test
  void aRotatedSecretStillVerifiesAndTheSignerSignsWithEveryOne() {
    String both = WebhookSigner.of(current, previous).sign("evt_1", clock.instant().getEpochSecond(), body);
    assertThat(both.split(" ")).hasSize(2).allSatisfy(s -> assertThat(s).startsWith("v1,"));
    String oldOnly = WebhookSigner.of(previous).sign("evt_1", clock.instant().getEpochSecond(), body);
    // a receiver that knows both secrets accepts a sender that has not rotated yet
    assertThatCode(() -> verifier(current, previous).verify("evt_1", now(), oldOnly, body)).doesNotThrowAnyException();
    // a receiver that only knows the new secret accepts a sender signing with both
    assertThatCode(() -> verifier(current).verify("evt_1", now(), both, body)).doesNotThrowAnyException();
    // and refuses one signing with the old secret only
    assertThatThrownBy(() -> verifier(current).verify("evt_1", now(), oldOnly, body))
        .isInstanceOf(WebhookVerificationException.class).extracting("reason").isEqualTo(Reason.SIGNATURE_MISMATCH);
  }

  @Test
  void acceptsWhenAnyOfSeveralSignaturesMatches() {
    String good = WebhookSigner.of(current).sign("evt_1", clock.instant().getEpochSecond(), body);
    String header = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,somethingelse " + good;
    assertThatCode(() -> verifier(current).verify("evt_1", now(), header, body)).doesNotThrowAnyException();
  }

  @Test
  void aSignatureSpelledWithoutItsPaddingOrWithOtherUnusedBitsIsRefused() {
    WebhookVerifier verifier = WebhookVerifier.builder(WebhookSecret.parse(SPEC_SECRET))
        .clock(new MutableClock(Instant.ofEpochSecond(SPEC_TIMESTAMP))).build();
    String timestamp = Long.toString(SPEC_TIMESTAMP);
    String unpadded = SPEC_SIGNATURE.substring(0, SPEC_SIGNATURE.length() - 1);
    String otherUnusedBits = SPEC_SIGNATURE.replace("1OE=", "1OF=");

    assertRefused(() -> verifier.verify(SPEC_ID, timestamp, unpadded, SPEC_BODY), Reason.SIGNATURE_MISMATCH);
    assertRefused(() -> verifier.verify(SPEC_ID, timestamp, otherUnusedBits, SPEC_BODY), Reason.SIGNATURE_MISMATCH);
    assertThatCode(() -> verifier.verify(SPEC_ID, timestamp, SPEC_SIGNATURE, SPEC_BODY)).doesNotThrowAnyException();
  }

  @Test
  void refusesForgeriesTamperingAndStaleTimestamps() {
    String signature = WebhookSigner.of(current).sign("evt_1", clock.instant().getEpochSecond(), body);
    WebhookVerifier verifier = verifier(current);
    assertRefused(() -> verifier.verify("evt_1", now(),
        WebhookSigner.of(WebhookSecret.generate()).sign("evt_1", clock.instant().getEpochSecond(), body), body),
        Reason.SIGNATURE_MISMATCH);
    byte[] tampered = body.clone();
    tampered[tampered.length - 2] = '9';
    assertRefused(() -> verifier.verify("evt_1", now(), signature, tampered), Reason.SIGNATURE_MISMATCH);
    assertRefused(() -> verifier.verify("evt_2", now(), signature, body), Reason.SIGNATURE_MISMATCH);
    String then = now();
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertRefused(() -> verifier.verify("evt_1", then, signature, body), Reason.TIMESTAMP_OUT_OF_TOLERANCE);
    clock.advance(Duration.ofMinutes(-10).minusSeconds(2));
    assertRefused(() -> verifier.verify("evt_1", then, signature, body), Reason.TIMESTAMP_OUT_OF_TOLERANCE);
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThatCode(() -> verifier.verify("evt_1", then, signature, body)).doesNotThrowAnyException();
  }

  @Test
  void malformedHeadersAreRefusedWithoutEchoingThem() {
    WebhookVerifier verifier = verifier(current);
    String sig = WebhookSigner.of(current).sign("evt_1", clock.instant().getEpochSecond(), body);
    assertRefused(() -> verifier.verify(null, now(), sig, body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt 1", now(), sig, body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt_1", "-5", sig, body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt_1", "99999999999999999999", sig, body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt_1", now(), "", body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt_1", now(), "v1," + "A".repeat(5000), body), Reason.MALFORMED_HEADERS);
    assertRefused(() -> verifier.verify("evt_1", now(), "v2,abc v1,not-base64!", body), Reason.SIGNATURE_MISMATCH);
    WebhookVerifier small = WebhookVerifier.builder(current).clock(clock).maxBodyBytes(8).build();
    assertRefused(() -> small.verify("evt_1", now(), sig, body), Reason.BODY_TOO_LARGE);
    assertThatThrownBy(() -> verifier.verify("evt_1", now(), "v1,bad", body)).message()
        .doesNotContain("v1,bad").doesNotContain(current.reveal());
  }

  @Test
  void secretsParseStrictlyAndNeverPrint() {
    assertThatThrownBy(() -> WebhookSecret.parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> WebhookSecret.parse("whsec_%%%")).isInstanceOf(IllegalArgumentException.class)
        .message().doesNotContain("%%%");
    assertThatThrownBy(() -> WebhookSecret.parse("whsec_c2hvcnQ=")).isInstanceOf(IllegalArgumentException.class);
    assertThat(current.toString()).doesNotContain(current.reveal().substring(6));
    assertThat(WebhookSecret.parse(current.reveal())).isEqualTo(current);
    assertThat(WebhookSigner.of(current).toString()).doesNotContain(current.reveal().substring(6));
  }

  static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, Reason reason) {
    assertThatThrownBy(call).isInstanceOf(WebhookVerificationException.class).extracting("reason").isEqualTo(reason);
  }
}
