package dev.idem.nats;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes outbox events to NATS JetStream. The destination {@code nats:<subject>} names the subject, which a stream
 * must capture; an event counts as delivered once the stream has stored it and answered with a {@link PublishAck}.
 *
 * <p>Each message carries the event id as {@code Nats-Msg-Id}, so the stream drops a re-send of the same event within
 * its duplicate window (two minutes unless the stream sets another): a relay that retries after a lost ack, or resends
 * after a crash, does not store the event twice. A {@linkplain PublishAck#isDuplicate() duplicate ack} therefore counts
 * as delivered. Past the window, consumers deduplicate ({@link NatsInboxConsumer} does, through the inbox).
 *
 * <p>The body is the event's JSON payload; the headers are the event's headers plus {@code Idem-Event-Type},
 * {@code Idem-Aggregate-Type} and {@code Idem-Aggregate-Id}. NATS header values are ASCII, so every header value
 * taken from the event (its own headers, type and aggregate) is percent-encoded in the style of RFC 3986: each
 * {@code %}, control character and non-ASCII character becomes {@code %XX} per UTF-8 byte ({@code müller-42} is sent
 * as {@code m%C3%BCller-42}); values of printable ASCII without {@code %} are sent unchanged.
 * {@link #decodeHeader(String)} restores the original. A batch is published asynchronously and the transport
 * waits up to the ack timeout (default 15 s) for all of its acks; a missing ack, a subject no stream captures, a
 * refusal by the stream or a lost connection are retried with the relay's backoff. A destination without a valid
 * subject, a header name NATS refuses, or a payload larger than the server's {@code max_payload} (the client refuses
 * them with {@link IllegalArgumentException}) are dead at once.
 *
 * <pre>{@code
 * io.nats.client.Connection nats = Nats.connect("nats://127.0.0.1:4222");
 * NatsJetStreamTransport transport = NatsJetStreamTransport.builder(nats).build();
 * OutboxRelay relay = OutboxRelay.builder(outbox).route("nats", transport).build();
 * relay.start();
 * // events enqueued with .destination("nats:payments.succeeded") go to the stream capturing payments.>
 * }</pre>
 *
 * <p>Thread-safe. The caller owns the NATS connection (which reconnects by itself) and closes it; closing the
 * transport does not.
 */
public final class NatsJetStreamTransport implements OutboxTransport {
  /** The header carrying the event type. */
  public static final String EVENT_TYPE = "Idem-Event-Type";
  /** The header carrying the aggregate type. */
  public static final String AGGREGATE_TYPE = "Idem-Aggregate-Type";
  /** The header carrying the aggregate id. */
  public static final String AGGREGATE_ID = "Idem-Aggregate-Id";

  private final String name;
  private final JetStream jetStream;
  private final Duration ackTimeout;
  private final String expectedStream;
  private final NatsPublishListener listener;

  private NatsJetStreamTransport(Builder b, JetStream jetStream) {
    this.name = b.name;
    this.jetStream = jetStream;
    this.ackTimeout = b.ackTimeout;
    this.expectedStream = b.expectedStream;
    this.listener = b.listener;
  }

  /** A transport publishing on {@code connection}, which the caller owns. */
  public static Builder builder(Connection connection) {
    return new Builder(connection);
  }

  public String name() {
    return name;
  }

  @Override
  public DeliveryResult send(OutboxMessage message) {
    return sendAll(List.of(message)).get(0);
  }

  /** Publishes the batch asynchronously, then waits for every ack up to the ack timeout. Never throws. */
  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    int n = messages.size();
    DeliveryResult[] results = new DeliveryResult[n];
    List<CompletableFuture<PublishAck>> futures = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      OutboxMessage m = messages.get(i);
      CompletableFuture<PublishAck> f = null;
      String subject = m.destinationDetail();
      String invalid = checkSubject(subject);
      if (invalid != null) {
        results[i] = DeliveryResult.permanent("destination '" + m.destination() + "': " + invalid
            + "; use nats:<subject>, e.g. nats:payments.succeeded", null);
      } else {
        try {
          f = jetStream.publishAsync(subject, headers(m), m.payload().getBytes(StandardCharsets.UTF_8), options(m));
        } catch (IllegalArgumentException e) {
          // refused by the client before sending (header name, payload over max_payload): no retry changes that
          results[i] = DeliveryResult.permanent("transport " + name + " cannot publish to '" + subject + "': "
              + OutboxTransport.describe(e), null);
        } catch (RuntimeException e) {
          results[i] = DeliveryResult.retry("transport " + name + " could not publish to '" + subject + "': "
              + OutboxTransport.describe(e), null);
        }
      }
      futures.add(f);
    }
    long deadline = System.nanoTime() + ackTimeout.toNanos();
    for (int i = 0; i < n; i++) {
      CompletableFuture<PublishAck> f = futures.get(i);
      if (f == null) {
        continue;
      }
      OutboxMessage m = messages.get(i);
      try {
        PublishAck ack = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        results[i] = DeliveryResult.delivered();
        try {
          listener.published(m, ack);
        } catch (RuntimeException ignored) {
          // a listener must not change the outcome
        }
      } catch (TimeoutException e) {
        f.cancel(false);
        results[i] = DeliveryResult.retry("no PublishAck from JetStream for subject '" + m.destinationDetail()
            + "' within " + ackTimeout.toMillis() + " ms", null);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        results[i] = DeliveryResult.retry("JetStream refused the message for subject '" + m.destinationDetail()
            + "': " + OutboxTransport.describe(cause), null);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        results[i] = DeliveryResult.retry("interrupted while waiting for a PublishAck", null);
      } catch (RuntimeException e) {
        results[i] = DeliveryResult.retry(OutboxTransport.describe(e), null);
      }
    }
    return List.of(results);
  }

  /** Why {@code subject} is not one a message can be published to, or null when it is. */
  static String checkSubject(String subject) {
    if (subject.isEmpty()) {
      return "no subject";
    }
    for (String token : subject.split("\\.", -1)) {
      if (token.isEmpty()) {
        return "subject '" + subject + "' has an empty token";
      }
      if (token.equals("*") || token.equals(">")) {
        return "subject '" + subject + "' has a wildcard; publish to a concrete subject";
      }
    }
    return null;
  }

  private static Headers headers(OutboxMessage m) {
    Headers h = new Headers();
    for (Map.Entry<String, String> e : m.headers().entrySet()) {
      h.put(e.getKey(), encodeHeader(e.getValue()));
    }
    h.put(EVENT_TYPE, encodeHeader(m.type()));
    h.put(AGGREGATE_TYPE, encodeHeader(m.aggregateType()));
    h.put(AGGREGATE_ID, encodeHeader(m.aggregateId()));
    return h;
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /**
   * {@code value} with every {@code %}, control character and non-ASCII character percent-encoded as its UTF-8 bytes
   * ({@code %XX}, upper-case hex); printable ASCII other than {@code %} is kept. Null stays null.
   */
  public static String encodeHeader(String value) {
    if (value == null || value.chars().allMatch(NatsJetStreamTransport::kept)) {
      return value;
    }
    StringBuilder out = new StringBuilder(value.length() + 16);
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (kept(c)) {
        out.append((char) c);
      } else {
        out.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
      }
    }
    return out.toString();
  }

  /** Whether {@link #encodeHeader} keeps {@code c} as it is: printable ASCII other than {@code %}. */
  private static boolean kept(int c) {
    return c >= 0x20 && c < 0x7f && c != '%';
  }

  /**
   * Reverses {@link #encodeHeader}: a header value this transport set, back to the event's value ({@code %XX}
   * sequences decoded as UTF-8; {@code +} is kept). Null stays null.
   *
   * @throws IllegalArgumentException when a {@code %} is not followed by two hex digits
   */
  public static String decodeHeader(String value) {
    if (value == null || value.indexOf('%') < 0) {
      return value;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '%') {
        int hi = i + 2 < value.length() ? Character.digit(value.charAt(i + 1), 16) : -1;
        int lo = hi < 0 ? -1 : Character.digit(value.charAt(i + 2), 16);
        if (lo < 0) {
          throw new IllegalArgumentException("bad percent-encoding at index " + i + " of a header value");
        }
        bytes.write(hi << 4 | lo);
        i += 2;
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * {@code text} (a URL, or a message naming URLs, such as jnats's when it cannot connect) without the user
   * information ({@code user:password@}) of the URLs in it; null stays null.
   */
  public static String withoutUserInfo(String text) {
    return text == null ? null : text.replaceAll("(?<=//)[^/@\\s]*@", "");
  }

  private PublishOptions options(OutboxMessage m) {
    PublishOptions.Builder b = PublishOptions.builder().messageId(m.id().toString()).streamTimeout(ackTimeout);
    if (expectedStream != null) {
      b.expectedStream(expectedStream);
    }
    return b.build();
  }

  @Override
  public String toString() {
    return "NatsJetStreamTransport{" + name + ", ackTimeout=" + ackTimeout
        + (expectedStream == null ? "" : ", stream=" + expectedStream) + '}';
  }

  /** Builds a {@link NatsJetStreamTransport}. Mutable, not thread-safe. */
  public static final class Builder {
    private final Connection connection;
    private String name = "nats";
    private Duration ackTimeout = Duration.ofSeconds(15);
    private String expectedStream;
    private NatsPublishListener listener = (message, ack) -> {};

    private Builder(Connection connection) {
      this.connection = Objects.requireNonNull(connection, "connection");
    }

    /** This transport's name, in its errors (default {@code nats}). */
    public Builder name(String name) {
      if (name == null || name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** How long a batch waits for its acks (default 15 s); unacknowledged messages are retried. */
    public Builder ackTimeout(Duration timeout) {
      if (timeout == null || timeout.compareTo(Duration.ZERO) <= 0 || timeout.compareTo(Duration.ofMinutes(10)) > 0) {
        throw new IllegalArgumentException("ackTimeout must be > 0 and at most 10 min, got " + timeout);
      }
      this.ackTimeout = timeout;
      return this;
    }

    /** Refuse (and retry) messages that a stream other than {@code stream} captures (default: any stream). */
    public Builder expectedStream(String stream) {
      if (stream == null || stream.isEmpty() || stream.length() > 255) {
        throw new IllegalArgumentException("expectedStream must be 1 to 255 characters, got '" + stream + "'");
      }
      this.expectedStream = stream;
      return this;
    }

    public Builder listener(NatsPublishListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** @throws IllegalStateException when the connection cannot give a JetStream context */
    public NatsJetStreamTransport build() {
      try {
        return new NatsJetStreamTransport(this, connection.jetStream());
      } catch (IOException e) {
        throw new IllegalStateException("transport " + name + " cannot use JetStream on "
            + withoutUserInfo(connection.getConnectedUrl()) + ": " + e.getMessage(), e);
      }
    }
  }
}
