package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.RunningService;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security: no forgery of the provider's Standard Webhooks signature gets past {@code POST /webhooks/provider}.
 * Thousands of generated webhooks, each a genuine one (random id, body and amount, signed with the provider's
 * secret) changed in one way an attacker could try: a random signature, another secret's, a truncated one, spaces
 * inside it, another version ({@code v0}, {@code v2}, {@code V1}, {@code v1a}), several signatures none of them valid,
 * a genuine signature with a timestamp outside the 5 minutes' tolerance (past or future), with the body changed by one
 * bit, with another {@code webhook-id} or {@code webhook-timestamp}, the valid signature after 16 invalid ones, or no
 * signature. Each is answered 401 {@code AUTH.webhook_signature}, and nothing is stored: {@code idem_inbox} and
 * {@code pay_provider_confirmation} gain only the rows of the genuine webhooks sent between the forgeries as controls,
 * each accepted. The seed is random, printed with every failure, and set with {@code -Didem.test.seed=<n>}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebhookForgeryTest {
  static final int CASES = 3_000;
  static final int CONTROL_EVERY = 100;
  static final int THREADS = 8;
  static final int TOLERANCE_SECONDS = 300;

  /** One way to forge a webhook from a genuine one. */
  enum Forgery {
    RANDOM_SIGNATURE, OTHER_SECRET, TRUNCATED, SPACES_INSIDE, OTHER_VERSION, SEVERAL_NONE_VALID, STALE_TIMESTAMP,
    FUTURE_TIMESTAMP, BODY_BIT_FLIPPED, OTHER_ID, OTHER_TIMESTAMP, VALID_AFTER_SIXTEEN_INVALID, NO_SIGNATURE,
    SIGNATURE_OF_OTHER_BODY
  }

  /** A webhook as sent: headers and body; a null header is left out. */
  record Webhook(String id, String timestamp, String signature, byte[] body) {
    Webhook withSignature(String other) {
      return new Webhook(id, timestamp, other, body);
    }
  }

  private final WebhookSecret providerSecret = WebhookSecret.generate();
  private final WebhookSigner genuine = WebhookSigner.of(providerSecret);
  private RunningService service;

  @TempDir
  static Path data;

  @BeforeAll
  void start() {
    // the outbox off: the provider's own webhooks would add inbox rows while the forgeries are counted
    service = RunningService.start("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE", "--payments.provider.webhook-secret=" + providerSecret.reveal(),
        "--payments.outbox.enabled=false");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void everyForgeryIsRefusedAndNothingIsStored() throws Exception {
    long seed = Long.getLong("idem.test.seed", new Random().nextLong());
    long inboxBefore = service.count("SELECT COUNT(*) FROM idem_inbox");
    long confirmationsBefore = service.count("SELECT COUNT(*) FROM pay_provider_confirmation");
    Map<Forgery, Integer> tried = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> cases = new ArrayList<>();

    try {
      for (int n = 0; n < CASES; n++) {
        int i = n;
        cases.add(pool.submit(() -> {
          // each case draws from its own generator: the seed reproduces it whatever the threads' interleaving
          Random random = new Random(seed * 1_000_003L + i);
          Webhook original = signedWebhook(random);
          Forgery kind = Forgery.values()[random.nextInt(Forgery.values().length)];
          Webhook forged = forge(kind, original, random);

          Answer answer = send(forged);

          String what = "seed " + seed + ", case " + i + ", " + kind + ": id " + forged.id() + ", timestamp "
              + forged.timestamp() + ", signature " + forged.signature() + ", body "
              + new String(forged.body(), StandardCharsets.UTF_8);
          assertThat(answer.status()).as(what + " -> " + answer).isEqualTo(401);
          assertThat(answer.code()).as(what).isEqualTo("AUTH.webhook_signature");
          tried.merge(kind, 1, Integer::sum);
          if (i % CONTROL_EVERY == 0) {
            Answer accepted = send(original);
            assertThat(accepted.status()).as("the genuine webhook of " + what + " -> " + accepted).isEqualTo(200);
          }
          return null;
        }));
      }
      for (Future<?> c : cases) {
        c.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }

    long controls = (CASES + CONTROL_EVERY - 1) / CONTROL_EVERY;
    assertThat(tried).as("every kind of forgery was tried").hasSize(Forgery.values().length);
    assertThat(service.count("SELECT COUNT(*) FROM idem_inbox") - inboxBefore)
        .as("seed " + seed + ": inbox rows of the genuine controls only").isEqualTo(controls);
    assertThat(service.count("SELECT COUNT(*) FROM pay_provider_confirmation") - confirmationsBefore)
        .as("seed " + seed + ": confirmations of the genuine controls only").isEqualTo(controls);
  }

  private Webhook signedWebhook(Random random) {
    String id = new UUID(random.nextLong(), random.nextLong()).toString();
    long now = System.currentTimeMillis() / 1000;
    byte[] body = ("{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"created\":\"2026-01-01T00:00:00Z\","
        + "\"data\":{\"id\":\"ch_forged_" + Long.toHexString(random.nextLong()) + "\",\"amount\":"
        + (1 + random.nextInt(1_000_000)) + "}}").getBytes(StandardCharsets.UTF_8);
    return new Webhook(id, Long.toString(now), genuine.sign(id, now, body), body);
  }

  private Webhook forge(Forgery kind, Webhook w, Random random) {
    long timestamp = Long.parseLong(w.timestamp());
    String signature = w.signature().substring("v1,".length());
    switch (kind) {
      case RANDOM_SIGNATURE:
        return w.withSignature("v1," + randomSignature(random));
      case OTHER_SECRET:
        return w.withSignature(WebhookSigner.of(WebhookSecret.generate()).sign(w.id(), timestamp, w.body()));
      case TRUNCATED:
        // at least one character of the signature itself goes: a signature without its padding is still whole
        return w.withSignature(w.signature().substring(0, random.nextInt(w.signature().indexOf('='))));
      case SPACES_INSIDE: {
        int at = random.nextInt(signature.indexOf('='));
        String[] forms = {"v1, " + signature, "v1 ," + signature, " v1 , " + signature,
            "v1," + signature.substring(0, at) + " " + signature.substring(at)};
        return w.withSignature(forms[random.nextInt(forms.length)]);
      }
      case OTHER_VERSION: {
        String[] versions = {"v0", "v2", "V1", "v1a", "v", "1", "", "v1 "};
        return w.withSignature(versions[random.nextInt(versions.length)] + "," + signature);
      }
      case SEVERAL_NONE_VALID: {
        List<String> parts = new ArrayList<>();
        for (int n = 1 + random.nextInt(8); n > 0; n--) {
          parts.add(random.nextBoolean() ? "v1," + randomSignature(random)
              : WebhookSigner.of(WebhookSecret.generate()).sign(w.id(), timestamp, w.body()));
        }
        parts.add("v1a," + signature);
        return w.withSignature(String.join(" ", parts));
      }
      case STALE_TIMESTAMP:
      case FUTURE_TIMESTAMP: {
        long offset = TOLERANCE_SECONDS + 2 + random.nextInt(1_000_000);
        long moved = kind == Forgery.STALE_TIMESTAMP ? timestamp - offset : timestamp + offset;
        return new Webhook(w.id(), Long.toString(moved), genuine.sign(w.id(), moved, w.body()), w.body());
      }
      case BODY_BIT_FLIPPED: {
        byte[] body = w.body().clone();
        int at = random.nextInt(body.length);
        body[at] = (byte) (body[at] ^ (1 << random.nextInt(7)));
        return new Webhook(w.id(), w.timestamp(), w.signature(), body);
      }
      case OTHER_ID: {
        char[] id = w.id().toCharArray();
        int at = random.nextInt(id.length);
        id[at] = id[at] == 'f' ? 'e' : id[at] == '-' ? '_' : (char) (id[at] + 1);
        return new Webhook(new String(id), w.timestamp(), w.signature(), w.body());
      }
      case OTHER_TIMESTAMP:
        return new Webhook(w.id(), Long.toString(timestamp + (random.nextBoolean() ? 1 : -1)), w.signature(),
            w.body());
      case VALID_AFTER_SIXTEEN_INVALID: {
        StringBuilder header = new StringBuilder();
        for (int n = 0; n < 16; n++) {
          header.append("v1,").append(randomSignature(random)).append(' ');
        }
        return w.withSignature(header.append(w.signature()).toString());
      }
      case NO_SIGNATURE:
        return w.withSignature(random.nextBoolean() ? null : "v1,");
      case SIGNATURE_OF_OTHER_BODY: {
        Webhook other = signedWebhook(random);
        return new Webhook(w.id(), w.timestamp(), genuine.sign(w.id(), timestamp, other.body()), w.body());
      }
      default:
        throw new IllegalStateException(kind.name());
    }
  }

  private static String randomSignature(Random random) {
    byte[] bytes = new byte[32];
    random.nextBytes(bytes);
    return Base64.getEncoder().encodeToString(bytes);
  }

  private Answer send(Webhook w) {
    HttpRequest.Builder b = service.request("/webhooks/provider", null).header("Content-Type", "application/json")
        .header("webhook-id", w.id()).header("webhook-timestamp", w.timestamp())
        .POST(HttpRequest.BodyPublishers.ofByteArray(w.body()));
    if (w.signature() != null) {
      b.header("webhook-signature", w.signature());
    }
    return service.send(b.build());
  }
}
