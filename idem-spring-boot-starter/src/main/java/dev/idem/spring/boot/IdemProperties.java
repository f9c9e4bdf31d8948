package dev.idem.spring.boot;

import dev.idem.core.protocol.IdemHeaders;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code idem.*} properties. Validated once at startup by {@link #validate()}; the MDC filter's order only where
 * that filter is registered ({@link Mdc#validate(int)}).
 */
@ConfigurationProperties(prefix = "idem")
public class IdemProperties {
  /** Whether Idem is auto-configured at all. */
  private boolean enabled = true;
  /** The instance name, used in log lines, meter tags, lease owners and messages. */
  private String name = "idem";
  /** How long kept answers are replayed, for operations without their own {@code @Idempotent(ttl)}. */
  private Duration defaultTtl = Duration.ofHours(24);
  /**
   * How long past its TTL a key stays taken (a retry with it is refused as {@code key_expired} instead of running
   * again), for operations without their own {@code @Idempotent(retention)}; {@code 0} turns it off.
   */
  private Duration defaultRetention = Duration.ofDays(30);
  /** How long a phased or leased execution holds a key before the completer may take it over. */
  private Duration defaultLease = Duration.ofSeconds(30);
  /**
   * Phased operations: after how many failed resumptions a record becomes uncertain (a reconciler or an operator
   * then decides it).
   */
  private int defaultResumeCapAttempts = 10;
  /** Phased operations: how old a record may be when a resumption fails before it becomes uncertain. */
  private Duration defaultResumeCapAge = Duration.ofHours(24);

  private final Store store = new Store();
  private final Filter filter = new Filter();
  private final Completer completer = new Completer();
  private final Purge purge = new Purge();
  private final Metrics metrics = new Metrics();
  private final Logging logging = new Logging();
  private final OpenApi openapi = new OpenApi();
  private final Encryption encryption = new Encryption();

  /**
   * Encryption at rest of the kept answers ({@code Idem.builder().encryption}): off by default. When on, the keys
   * come from a {@code KeyProvider} bean (a KMS) if there is one, else from {@link #getKeyring() keyring} (the text
   * form, typically from the environment variable {@code IDEM_ENCRYPTION_KEYRING}), which takes precedence, or
   * {@link #getKeyringFile() keyring-file}.
   */
  public static class Encryption {
    /** Whether kept answers are sealed at rest (default false). */
    private boolean enabled;
    /** The keyring's text form, newest key first: {@code id:base64-key} entries, comma-separated. Never logged. */
    private String keyring;
    /** A keyring file (the same text form, one entry per line); unused when {@link #keyring} is set. */
    private Path keyringFile;
    /** Whether a missing {@link #keyringFile} is created with one fresh key (default false). */
    private boolean createKeyringFile;
    /** The id of the key a created keyring file starts with (default {@code k1}). */
    private String newKeyId = "k1";
    /** Seals per data key before a fresh one is drawn (default 100,000; 1 gives a data key per answer). */
    private long dataKeyUses = 100_000;
    /** How long a data key serves before a fresh one is drawn (default 10 minutes). */
    private Duration dataKeyLifetime = Duration.ofMinutes(10);
    /**
     * Whether the fingerprints' per-field hashes are sealed with the answers (default true). False only during a
     * rolling upgrade from a version that did not seal them; see {@code Idem.Builder.sealFieldHashes}.
     */
    private boolean sealFieldHashes = true;

    public boolean isSealFieldHashes() {
      return sealFieldHashes;
    }

    public void setSealFieldHashes(boolean sealFieldHashes) {
      this.sealFieldHashes = sealFieldHashes;
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getKeyring() {
      return keyring;
    }

    public void setKeyring(String keyring) {
      this.keyring = keyring;
    }

    public Path getKeyringFile() {
      return keyringFile;
    }

    public void setKeyringFile(Path keyringFile) {
      this.keyringFile = keyringFile;
    }

    public boolean isCreateKeyringFile() {
      return createKeyringFile;
    }

    public void setCreateKeyringFile(boolean createKeyringFile) {
      this.createKeyringFile = createKeyringFile;
    }

    public String getNewKeyId() {
      return newKeyId;
    }

    public void setNewKeyId(String newKeyId) {
      this.newKeyId = newKeyId;
    }

    public long getDataKeyUses() {
      return dataKeyUses;
    }

    public void setDataKeyUses(long dataKeyUses) {
      this.dataKeyUses = dataKeyUses;
    }

    public Duration getDataKeyLifetime() {
      return dataKeyLifetime;
    }

    public void setDataKeyLifetime(Duration dataKeyLifetime) {
      this.dataKeyLifetime = dataKeyLifetime;
    }

    /** Whether the keyring's text form is given; it then takes precedence over {@link #getKeyringFile()}. */
    public boolean hasKeyringText() {
      return keyring != null && !keyring.isBlank();
    }

    /** Checks the settings that do not depend on a KeyProvider bean. */
    void validate(boolean keyProviderBean) {
      if (!enabled) {
        return;
      }
      if (!keyProviderBean && !hasKeyringText() && keyringFile == null) {
        throw new IllegalStateException("idem.encryption.enabled=true needs idem.encryption.keyring (or the"
            + " environment variable IDEM_ENCRYPTION_KEYRING), idem.encryption.keyring-file, or a KeyProvider bean");
      }
      if (dataKeyUses < 1 || dataKeyUses > (1L << 32)) {
        throw new IllegalStateException("idem.encryption.data-key-uses must be 1..4294967296, got " + dataKeyUses);
      }
      if (dataKeyLifetime == null || dataKeyLifetime.toMillis() < 1) {
        throw new IllegalStateException("idem.encryption.data-key-lifetime must be at least 1ms, got "
            + dataKeyLifetime);
      }
    }
  }

  public static class OpenApi {
    /**
     * Where to serve the OpenAPI fragment of the HTTP contract ({@code IdemOpenApi}), such as
     * {@code /idem/openapi.json}; unset (the default), it is not served.
     */
    private String path;

    public String getPath() {
      return path;
    }

    public void setPath(String path) {
      this.path = path;
    }
  }

  public static class Store {
    /** The record table; an SQL identifier, optionally schema-qualified. */
    private String table = "idem_record";
    /** Create the record table and its indexes at startup when they are missing. */
    private boolean initializeSchema = false;
    /** How long a duplicate waits behind the first request's uncommitted record before it gets 409. */
    private Duration lockTimeout = Duration.ofSeconds(5);

    public String getTable() {
      return table;
    }

    public void setTable(String table) {
      this.table = table;
    }

    public boolean isInitializeSchema() {
      return initializeSchema;
    }

    public void setInitializeSchema(boolean initializeSchema) {
      this.initializeSchema = initializeSchema;
    }

    public Duration getLockTimeout() {
      return lockTimeout;
    }

    public void setLockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
    }
  }

  public static class Filter {
    /** The servlet filter's order; authentication must run before it. */
    private int order = 0;
    /** The largest request body an idempotent route buffers; larger bodies get 413. */
    private int maxRequestBytes = 1 << 20;
    /** The status of a payload mismatch: 422 or 409. */
    private int mismatchStatus = 422;
    /** Response headers kept for replays (Content-Type is always kept; credentials and cookies never are). */
    private List<String> keepHeaders =
        new ArrayList<>(new TreeSet<>(IdemHeaders.KEPT_BY_DEFAULT)); // not the filter's: no servlet API needed
    /**
     * Take the scope from this header (set by a trusted gateway) instead of the authenticated principal. Leave
     * empty unless a layer in front of the service sets and strips it.
     */
    private String scopeHeader;
    /**
     * Where operators see a record, for the answer to a request whose record is uncertain (409
     * {@code CONFLICT.idempotency.outcome_uncertain}): a URL template whose {@code {scope}}, {@code {operation}} and
     * {@code {key}} are replaced by the record's, URL-encoded. It becomes the problem's {@code record} member and a
     * {@code Link} header. Empty (the default): no link.
     */
    private String recordLink;
    /**
     * A request with {@code Idempotency-Attempt: 1} (a sender's first try) skips the look-up of its record, on an
     * atomic route before the work and on a phased route before the first phase, and the record's unique key decides
     * at commit; retries still look it up first. Atomic routes skip it only when they join a Spring transaction on the
     * store's {@code DataSource} or the application gives its own {@code TransactionBoundary}. Turn it off for clients
     * that send attempt 1 on every try.
     */
    private boolean firstAttemptSkipsLookup = true;

    public boolean isFirstAttemptSkipsLookup() {
      return firstAttemptSkipsLookup;
    }

    public void setFirstAttemptSkipsLookup(boolean firstAttemptSkipsLookup) {
      this.firstAttemptSkipsLookup = firstAttemptSkipsLookup;
    }

    public String getRecordLink() {
      return recordLink;
    }

    public void setRecordLink(String recordLink) {
      this.recordLink = recordLink;
    }

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }

    public int getMaxRequestBytes() {
      return maxRequestBytes;
    }

    public void setMaxRequestBytes(int maxRequestBytes) {
      this.maxRequestBytes = maxRequestBytes;
    }

    public int getMismatchStatus() {
      return mismatchStatus;
    }

    public void setMismatchStatus(int mismatchStatus) {
      this.mismatchStatus = mismatchStatus;
    }

    public List<String> getKeepHeaders() {
      return keepHeaders;
    }

    public void setKeepHeaders(List<String> keepHeaders) {
      this.keepHeaders = keepHeaders;
    }

    public String getScopeHeader() {
      return scopeHeader;
    }

    public void setScopeHeader(String scopeHeader) {
      this.scopeHeader = scopeHeader;
    }
  }

  public static class Completer {
    /** Run the completer, which drives phased records whose lease expired to a final state. */
    private boolean enabled = true;
    /** Time between completer rounds. */
    private Duration interval = Duration.ofSeconds(5);
    /** Records per completer round. */
    private int batchSize = 100;

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

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }

  public static class Purge {
    /** Delete expired records in the background, in bounded batches. */
    private boolean enabled = true;
    /** Time between purge runs. */
    private Duration interval = Duration.ofMinutes(10);
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

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }

  /** Meters ({@code idem.metrics.*}); the meters themselves need Micrometer and a {@code MeterRegistry}. */
  public static class Metrics {
    /**
     * The shortest time between two counts of the records in progress behind the {@code idem.records.in_progress}
     * gauges (one query on the record table, only when the gauges are scraped, off the request path).
     */
    private Duration inProgressRefresh = Duration.ofSeconds(10);

    /** The shortest time between two counts of the records in progress. */
    public Duration getInProgressRefresh() {
      return inProgressRefresh;
    }

    /** Sets the shortest time between two counts of the records in progress. */
    public void setInProgressRefresh(Duration inProgressRefresh) {
      this.inProgressRefresh = inProgressRefresh;
    }
  }

  /** Logs ({@code idem.logging.*}): lines of the executor and the completer, and the request's MDC. */
  public static class Logging {
    /**
     * Log what the executor and the completer do (logger {@code dev.idem}): through SLF4J with MDC when SLF4J is
     * present, else through {@code System.Logger}.
     */
    private boolean enabled = true;
    private final Mdc mdc = new Mdc();

    /** Whether the executor's and the completer's lines are logged. */
    public boolean isEnabled() {
      return enabled;
    }

    /** Sets whether the executor's and the completer's lines are logged. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** The request filter that puts the key and the attempt into the MDC. */
    public Mdc getMdc() {
      return mdc;
    }
  }

  /** The MDC filter ({@code idem.logging.mdc.*}), in servlet applications with SLF4J. */
  public static class Mdc {
    /**
     * The MDC filter's order when {@code idem.logging.mdc.order} is not set: among the first filters, before
     * authentication (Spring Security's chain is at -100), unless {@code idem.filter.order} is lower still.
     */
    public static final int DEFAULT_ORDER = Integer.MIN_VALUE + 50;

    /**
     * Register the MDC filter, which puts {@code idempotency_key} and {@code attempt} into the MDC of every request
     * that carries an {@code Idempotency-Key} or {@code Idempotency-Attempt} header, and wraps the response of every
     * unsafe request (POST, PUT, PATCH, DELETE...), with or without those headers, to put the code of a problem
     * answer into the MDC as {@code error_code}; every line logged while the request runs carries them. Safe requests
     * without either header pass untouched.
     */
    private boolean enabled = true;
    /**
     * The filter's order; when set, it must be lower than {@code idem.filter.order}. Unset (the default): before
     * authentication ({@code Integer.MIN_VALUE + 50}), or just before the idempotency filter when
     * {@code idem.filter.order} is that low.
     */
    private Integer order;

    /** Whether the MDC filter is registered. */
    public boolean isEnabled() {
      return enabled;
    }

    /** Sets whether the MDC filter is registered. */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** The MDC filter's order as configured; null when unset (see {@link #effectiveOrder(int)}). */
    public Integer getOrder() {
      return order;
    }

    /** Sets the MDC filter's order; it must be lower than {@code idem.filter.order}. Null restores the default. */
    public void setOrder(Integer order) {
      this.order = order;
    }

    /**
     * Checks the order against the idempotency filter's; the auto-configuration calls it only when it registers the
     * MDC filter, so a conflicting order is no error while the filter is off.
     *
     * @throws IllegalStateException when {@code idem.logging.mdc.order} is set and not lower than
     *     {@code idempotencyFilterOrder}
     */
    public void validate(int idempotencyFilterOrder) {
      if (order != null && order >= idempotencyFilterOrder) {
        throw new IllegalStateException("idem.logging.mdc.order (" + order + ") must be lower than"
            + " idem.filter.order (" + idempotencyFilterOrder + "): the MDC must be set before the idempotency filter"
            + " runs; lower it, or leave it unset to have it placed before the idempotency filter");
      }
    }

    /**
     * The order to register the MDC filter with: {@link #getOrder()} when set; else {@link #DEFAULT_ORDER}, or one
     * less than {@code idempotencyFilterOrder} when that is lower. When {@code idempotencyFilterOrder} is
     * {@link Integer#MIN_VALUE} nothing is lower, and both filters get {@link Integer#MIN_VALUE}: Spring Boot keeps
     * filters of equal order in the order of their registration beans, and the logging auto-configuration registers
     * the MDC filter's before the idempotency filter's.
     */
    public int effectiveOrder(int idempotencyFilterOrder) {
      if (order != null) {
        return order;
      }
      int justBefore = idempotencyFilterOrder == Integer.MIN_VALUE ? Integer.MIN_VALUE : idempotencyFilterOrder - 1;
      return Math.min(DEFAULT_ORDER, justBefore);
    }
  }

  /** Checks every setting; the message names the property and the bad value. */
  public void validate() {
    if (name == null || name.isBlank() || name.length() > 64) {
      throw new IllegalStateException("idem.name must be 1 to 64 characters, got '" + name + "'");
    }
    positive("idem.default-ttl", defaultTtl);
    positive("idem.default-lease", defaultLease);
    positive("idem.default-resume-cap-age", defaultResumeCapAge);
    if (defaultResumeCapAttempts < 1 || defaultResumeCapAttempts > 1000) {
      throw new IllegalStateException("idem.default-resume-cap-attempts must be 1..1000, got "
          + defaultResumeCapAttempts);
    }
    if (defaultRetention == null || defaultRetention.isNegative()) {
      throw new IllegalStateException("idem.default-retention must be zero or a positive duration, got "
          + defaultRetention);
    }
    positive("idem.store.lock-timeout", store.lockTimeout);
    positive("idem.completer.interval", completer.interval);
    positive("idem.purge.interval", purge.interval);
    if (filter.maxRequestBytes < 1) {
      throw new IllegalStateException("idem.filter.max-request-bytes must be positive, got " + filter.maxRequestBytes);
    }
    if (filter.mismatchStatus != 422 && filter.mismatchStatus != 409) {
      throw new IllegalStateException("idem.filter.mismatch-status must be 422 or 409, got " + filter.mismatchStatus);
    }
    if (completer.batchSize < 1 || completer.batchSize > 10_000) {
      throw new IllegalStateException("idem.completer.batch-size must be 1..10000, got " + completer.batchSize);
    }
    if (purge.batchSize < 1 || purge.batchSize > 100_000) {
      throw new IllegalStateException("idem.purge.batch-size must be 1..100000, got " + purge.batchSize);
    }
    positive("idem.metrics.in-progress-refresh", metrics.inProgressRefresh);
    if (openapi.path != null && (!openapi.path.startsWith("/") || openapi.path.contains("*"))) {
      throw new IllegalStateException("idem.openapi.path must be a path starting with / and without wildcards, got '"
          + openapi.path + "'");
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

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public Duration getDefaultTtl() {
    return defaultTtl;
  }

  public void setDefaultTtl(Duration defaultTtl) {
    this.defaultTtl = defaultTtl;
  }

  public int getDefaultResumeCapAttempts() {
    return defaultResumeCapAttempts;
  }

  public void setDefaultResumeCapAttempts(int defaultResumeCapAttempts) {
    this.defaultResumeCapAttempts = defaultResumeCapAttempts;
  }

  public Duration getDefaultResumeCapAge() {
    return defaultResumeCapAge;
  }

  public void setDefaultResumeCapAge(Duration defaultResumeCapAge) {
    this.defaultResumeCapAge = defaultResumeCapAge;
  }

  public Duration getDefaultRetention() {
    return defaultRetention;
  }

  public void setDefaultRetention(Duration defaultRetention) {
    this.defaultRetention = defaultRetention;
  }

  public Duration getDefaultLease() {
    return defaultLease;
  }

  public void setDefaultLease(Duration defaultLease) {
    this.defaultLease = defaultLease;
  }

  public Store getStore() {
    return store;
  }

  public Filter getFilter() {
    return filter;
  }

  public Completer getCompleter() {
    return completer;
  }

  public Purge getPurge() {
    return purge;
  }

  public OpenApi getOpenapi() {
    return openapi;
  }

  /** Encryption at rest of the kept answers. */
  public Encryption getEncryption() {
    return encryption;
  }

  /** The meters' settings. */
  public Metrics getMetrics() {
    return metrics;
  }

  /** The logs' settings. */
  public Logging getLogging() {
    return logging;
  }
}
