package dev.idem.spring.outbox;

import dev.idem.outbox.webhook.WebhookSecret;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code idem.outbox.*} properties. Validated once at startup by {@link #validate()}. */
@ConfigurationProperties(prefix = "idem.outbox")
public class IdemOutboxProperties {
  private static final Pattern TABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,49}");
  private static final Duration HOUR = Duration.ofHours(1);

  /** Whether the outbox, the inbox, the relay and their purge are auto-configured. */
  private boolean enabled = true;
  /** The outbox table; its attempt history is {@code <table>_attempt}. */
  private String table = "idem_outbox";
  /** The inbox table. */
  private String inboxTable = "idem_inbox";
  /**
   * Create the outbox, attempt history and inbox tables at startup when they are missing (as
   * {@code idem.store.initialize-schema} does for the record table). Off by default: use your migration tool with
   * {@code db/idem/<dialect>/V2__idem_outbox.sql} and {@code V7__idem_outbox_finished_index.sql}.
   */
  private boolean initializeSchema = false;
  /** Event types delivered in order per aggregate; decided when an event is enqueued. */
  private Set<String> orderedTypes = new LinkedHashSet<>();

  private final Relay relay = new Relay();
  private final Purge purge = new Purge();
  private final Metrics metrics = new Metrics();
  private final Webhooks webhooks = new Webhooks();

  /** The relay, started when at least one {@link OutboxRoute} bean exists. */
  public static class Relay {
    /** Run the relay in this application. */
    private boolean enabled = true;
    /** The relay's name, in its thread names, claim tokens and meter tags (at most 24 characters). */
    private String name = "relay";
    /** Worker threads. */
    private int threads = 1;
    /** Events claimed per cycle. */
    private int batchSize = 100;
    /** How long a claim holds its rows; make it comfortably longer than a batch takes to send. */
    private Duration lease = Duration.ofSeconds(60);
    /** How long an idle worker waits before it looks again. */
    private Duration pollInterval = Duration.ofMillis(50);
    /** Attempts before an event is dead, for routes without their own. */
    private int maxAttempts = 12;
    /** Delete delivered events at once instead of marking them delivered (and purging them later). */
    private boolean deleteDelivered = false;
    /**
     * Wake the relay as soon as a Spring transaction that enqueued events for one of its routes commits, instead of
     * leaving them to its next poll.
     */
    private boolean wakeOnCommit = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public int getThreads() {
      return threads;
    }

    public void setThreads(int threads) {
      this.threads = threads;
    }

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }

    public Duration getLease() {
      return lease;
    }

    public void setLease(Duration lease) {
      this.lease = lease;
    }

    public Duration getPollInterval() {
      return pollInterval;
    }

    public void setPollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
    }

    public int getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public boolean isDeleteDelivered() {
      return deleteDelivered;
    }

    public void setDeleteDelivered(boolean deleteDelivered) {
      this.deleteDelivered = deleteDelivered;
    }

    public boolean isWakeOnCommit() {
      return wakeOnCommit;
    }

    public void setWakeOnCommit(boolean wakeOnCommit) {
      this.wakeOnCommit = wakeOnCommit;
    }
  }

  /** The purge of delivered (and discarded) events and of old inbox records. */
  public static class Purge {
    /** Purge in the background, in bounded batches. */
    private boolean enabled = true;
    /** Time between purge runs. */
    private Duration interval = Duration.ofMinutes(10);
    /** How long delivered and discarded events are kept. */
    private Duration deliveredRetention = Duration.ofDays(7);
    /**
     * How long inbox records are kept: longer than any redelivery can take (a webhook sender's retry schedule, a
     * broker's redelivery), or a late copy is processed again.
     */
    private Duration inboxRetention = Duration.ofDays(7);
    /** Rows per purge batch (each batch is its own short transaction). */
    private int batchSize = 1000;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }

    public Duration getDeliveredRetention() {
      return deliveredRetention;
    }

    public void setDeliveredRetention(Duration deliveredRetention) {
      this.deliveredRetention = deliveredRetention;
    }

    public Duration getInboxRetention() {
      return inboxRetention;
    }

    public void setInboxRetention(Duration inboxRetention) {
      this.inboxRetention = inboxRetention;
    }

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }

  /** Meters. */
  public static class Metrics {
    /** The backlog gauges read the outbox's statistics at most this often, however often they are scraped. */
    private Duration statsRefresh = Duration.ofSeconds(5);

    public Duration getStatsRefresh() {
      return statsRefresh;
    }

    public void setStatsRefresh(Duration statsRefresh) {
      this.statsRefresh = statsRefresh;
    }
  }

  /** Webhook receivers, registered by {@link WebhookReceivers#register}. */
  public static class Webhooks {
    /** Receivers by name; the name is the inbox consumer unless {@code consumer} is set. */
    private Map<String, Receiver> receivers = new LinkedHashMap<>();

    public Map<String, Receiver> getReceivers() {
      return receivers;
    }

    public void setReceivers(Map<String, Receiver> receivers) {
      this.receivers = receivers;
    }
  }

  /** One webhook receiver: {@code idem.outbox.webhooks.receivers.<name>.*}. */
  public static class Receiver {
    /** The servlet path, such as {@code /webhooks/provider}. */
    private String path;
    /**
     * The signing secrets ({@code whsec_...}): the current one and those being rotated out. A signature made with any
     * of them is accepted.
     */
    private List<String> secrets = new ArrayList<>();
    /** How far a webhook's timestamp may be from now, either way (at most 1 hour). */
    private Duration tolerance = Duration.ofMinutes(5);
    /** The largest body accepted; larger ones get 413. */
    private int maxBodyBytes = 1 << 20;
    /** The inbox consumer name; the receiver's name when empty. */
    private String consumer;

    public String getPath() {
      return path;
    }

    public void setPath(String path) {
      this.path = path;
    }

    public List<String> getSecrets() {
      return secrets;
    }

    public void setSecrets(List<String> secrets) {
      this.secrets = secrets;
    }

    public Duration getTolerance() {
      return tolerance;
    }

    public void setTolerance(Duration tolerance) {
      this.tolerance = tolerance;
    }

    public int getMaxBodyBytes() {
      return maxBodyBytes;
    }

    public void setMaxBodyBytes(int maxBodyBytes) {
      this.maxBodyBytes = maxBodyBytes;
    }

    public String getConsumer() {
      return consumer;
    }

    public void setConsumer(String consumer) {
      this.consumer = consumer;
    }

    /** The secrets, parsed (validated by {@link IdemOutboxProperties#validate()}). */
    public List<WebhookSecret> parsedSecrets() {
      List<WebhookSecret> parsed = new ArrayList<>(secrets.size());
      for (String s : secrets) {
        parsed.add(WebhookSecret.parse(s.trim()));
      }
      return parsed;
    }
  }

  /** Checks every setting; the message names the property and the bad value (never a secret). */
  public void validate() {
    table("idem.outbox.table", table);
    table("idem.outbox.inbox-table", inboxTable);
    if (orderedTypes == null) {
      throw new IllegalStateException("idem.outbox.ordered-types must not be null");
    }
    for (String type : orderedTypes) {
      if (type == null || type.isBlank() || type.length() > 255) {
        throw new IllegalStateException("idem.outbox.ordered-types entries must be 1 to 255 characters, got '"
            + type + "'");
      }
    }
    if (relay.name == null || relay.name.isBlank() || relay.name.length() > 24) {
      throw new IllegalStateException("idem.outbox.relay.name must be 1 to 24 characters, got '" + relay.name + "'");
    }
    range("idem.outbox.relay.threads", relay.threads, 1, 64);
    range("idem.outbox.relay.batch-size", relay.batchSize, 1, 5000);
    range("idem.outbox.relay.max-attempts", relay.maxAttempts, 1, 1000);
    if (relay.lease == null || relay.lease.compareTo(Duration.ofMillis(100)) < 0 || relay.lease.compareTo(HOUR) > 0) {
      throw new IllegalStateException("idem.outbox.relay.lease must be 100ms to 1h, got " + relay.lease);
    }
    positive("idem.outbox.relay.poll-interval", relay.pollInterval);
    if (relay.pollInterval.compareTo(Duration.ofMinutes(1)) > 0) {
      throw new IllegalStateException("idem.outbox.relay.poll-interval must be at most 1m, got " + relay.pollInterval);
    }
    positive("idem.outbox.purge.interval", purge.interval);
    positive("idem.outbox.purge.delivered-retention", purge.deliveredRetention);
    positive("idem.outbox.purge.inbox-retention", purge.inboxRetention);
    range("idem.outbox.purge.batch-size", purge.batchSize, 1, 100_000);
    positive("idem.outbox.metrics.stats-refresh", metrics.statsRefresh);
    if (webhooks.receivers == null) {
      throw new IllegalStateException("idem.outbox.webhooks.receivers must not be null");
    }
    webhooks.receivers.forEach(IdemOutboxProperties::validate);
  }

  private static void validate(String name, Receiver r) {
    String prefix = "idem.outbox.webhooks.receivers." + name + ".";
    if (r == null) {
      throw new IllegalStateException(prefix + "* must be set");
    }
    if (r.path == null || !r.path.startsWith("/") || r.path.length() > 500 || r.path.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalStateException(prefix + "path must be a servlet path starting with '/', got '" + r.path + "'");
    }
    if (r.secrets == null || r.secrets.isEmpty()) {
      throw new IllegalStateException(prefix + "secrets must list at least one secret (whsec_...)");
    }
    for (int i = 0; i < r.secrets.size(); i++) {
      String s = r.secrets.get(i);
      try {
        WebhookSecret.parse(s == null ? "" : s.trim());
      } catch (IllegalArgumentException e) {
        // the message of WebhookSecret.parse never repeats the input
        throw new IllegalStateException(prefix + "secrets[" + i + "] is not a webhook secret: " + e.getMessage());
      }
    }
    if (r.tolerance == null || r.tolerance.compareTo(Duration.ofSeconds(5)) < 0 || r.tolerance.compareTo(HOUR) > 0) {
      // below a few seconds, ordinary clock skew between sender and receiver refuses genuine webhooks
      throw new IllegalStateException(prefix + "tolerance must be 5s to 1h, got " + r.tolerance);
    }
    range(prefix + "max-body-bytes", r.maxBodyBytes, 1, 64 << 20);
    String consumer = r.consumer == null || r.consumer.isBlank() ? name : r.consumer;
    if (consumer.length() > 255 || consumer.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalStateException(prefix + "consumer must be 1 to 255 characters without control characters");
    }
  }

  private static void table(String property, String value) {
    if (value == null || !TABLE.matcher(value).matches()) {
      throw new IllegalStateException(property + " must be an SQL identifier of at most 50 characters"
          + " ([A-Za-z_][A-Za-z0-9_]*), got '" + value + "'");
    }
  }

  private static void range(String property, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalStateException(property + " must be " + min + ".." + max + ", got " + value);
    }
  }

  private static void positive(String property, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalStateException(property + " must be a positive duration, got " + d);
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getTable() {
    return table;
  }

  public void setTable(String table) {
    this.table = table;
  }

  public String getInboxTable() {
    return inboxTable;
  }

  public void setInboxTable(String inboxTable) {
    this.inboxTable = inboxTable;
  }

  public boolean isInitializeSchema() {
    return initializeSchema;
  }

  public void setInitializeSchema(boolean initializeSchema) {
    this.initializeSchema = initializeSchema;
  }

  public Set<String> getOrderedTypes() {
    return orderedTypes;
  }

  public void setOrderedTypes(Set<String> orderedTypes) {
    this.orderedTypes = orderedTypes;
  }

  public Relay getRelay() {
    return relay;
  }

  public Purge getPurge() {
    return purge;
  }

  public Metrics getMetrics() {
    return metrics;
  }

  public Webhooks getWebhooks() {
    return webhooks;
  }
}
