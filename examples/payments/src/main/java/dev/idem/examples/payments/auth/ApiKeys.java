package dev.idem.examples.payments.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;

/**
 * The API keys and the tenant each one authenticates. Keys are held as SHA-256 digests and compared in constant
 * time. Immutable and thread-safe.
 *
 * <p>Configured as {@code payments.api-keys.<key>=<tenant>} (one property per key; read verbatim, so keys may hold
 * underscores and capitals) or as a list {@code payments.api-keys=<key>=<tenant>,<key>=<tenant>} (handy in an
 * environment variable, {@code PAYMENTS_API_KEYS}). Without any, the test keys {@code sk_test_alice} (tenant
 * {@code alice}) and {@code sk_test_bob} (tenant {@code bob}) are active.
 */
public final class ApiKeys {
  static final String PREFIX = "payments.api-keys";
  static final String ENVIRONMENT_VARIABLE = "PAYMENTS_API_KEYS";
  /** The keys in force when none are configured. */
  public static final Map<String, String> TEST_KEYS = Map.of("sk_test_alice", "alice", "sk_test_bob", "bob");

  private final Map<Digest, Tenant> tenants;

  private ApiKeys(Map<String, String> keyToTenant) {
    Map<Digest, Tenant> byDigest = new HashMap<>();
    keyToTenant.forEach((key, tenant) -> byDigest.put(Digest.of(key), new Tenant(tenant.trim())));
    this.tenants = Map.copyOf(byDigest);
  }

  public static ApiKeys of(Map<String, String> keyToTenant) {
    keyToTenant.forEach((key, tenant) -> {
      if (key == null || key.isBlank() || tenant == null || tenant.isBlank()) {
        throw new IllegalArgumentException(PREFIX + ": every key needs a tenant, got '" + key + "' -> '" + tenant
            + "'");
      }
    });
    return new ApiKeys(keyToTenant);
  }

  /** The keys configured in the environment, or {@link #TEST_KEYS} when there are none. */
  public static ApiKeys from(ConfigurableEnvironment environment) {
    Map<String, String> configured = new LinkedHashMap<>();
    String list = environment.getProperty(PREFIX, environment.getProperty(ENVIRONMENT_VARIABLE, ""));
    if (!list.isBlank()) {
      for (String pair : list.split(",")) {
        String[] kv = pair.trim().split("=", 2);
        if (kv.length != 2) {
          throw new IllegalArgumentException(PREFIX + " must be a list of <key>=<tenant>, got '" + pair.trim() + "'");
        }
        configured.putIfAbsent(kv[0].trim(), kv[1].trim());
      }
    }
    for (PropertySource<?> source : environment.getPropertySources()) {
      if (source instanceof EnumerablePropertySource) {
        for (String name : ((EnumerablePropertySource<?>) source).getPropertyNames()) {
          String key = keyOf(name);
          if (key != null) {
            configured.putIfAbsent(key, String.valueOf(environment.getProperty(name)));
          }
        }
      }
    }
    return of(configured.isEmpty() ? TEST_KEYS : configured);
  }

  private static String keyOf(String propertyName) {
    if (propertyName.startsWith(PREFIX + ".") && propertyName.length() > PREFIX.length() + 1) {
      return propertyName.substring(PREFIX.length() + 1);
    }
    if (propertyName.startsWith(PREFIX + "[") && propertyName.endsWith("]")) {
      return propertyName.substring(PREFIX.length() + 1, propertyName.length() - 1);
    }
    return null;
  }

  /** The tenant a key authenticates, or empty for an unknown key. */
  public Optional<Tenant> tenantOf(String key) {
    return key == null || key.isEmpty() ? Optional.empty() : Optional.ofNullable(tenants.get(Digest.of(key)));
  }

  public int size() {
    return tenants.size();
  }

  @Override
  public String toString() {
    return "ApiKeys[" + tenants.size() + " keys]";
  }

  /** A key's SHA-256 digest; equality is constant-time. */
  record Digest(byte[] bytes) {
    static Digest of(String key) {
      try {
        return new Digest(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-256 is missing from this JVM", e);
      }
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Digest && MessageDigest.isEqual(bytes, ((Digest) o).bytes);
    }

    @Override
    public int hashCode() {
      return (bytes[0] & 0xff) << 24 | (bytes[1] & 0xff) << 16 | (bytes[2] & 0xff) << 8 | (bytes[3] & 0xff);
    }

    @Override
    public String toString() {
      return "Digest";
    }
  }
}
