package dev.idem.core.fingerprint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The fingerprint of a request: the hex SHA-256 of the operation and the canonical request body, plus one hash
 * per top-level JSON member so that a mismatch can name the fields that differ without storing the request.
 * Computed by {@link Fingerprinter}, which documents exactly what is hashed. Immutable and thread-safe.
 *
 * @param hash 64 lower-case hex characters
 * @param fieldHashes top-level member name to the first 16 hex characters of the SHA-256 of its canonical value;
 *     empty when the body is not a
 *     JSON object (arrays, scalars, non-JSON bodies hashed raw)
 */
public record Fingerprint(String hash, Map<String, String> fieldHashes) {

  public Fingerprint {
    Objects.requireNonNull(hash, "hash");
    if (hash.length() != 64) {
      throw new IllegalArgumentException("fingerprint hash must be 64 hex characters, got " + hash.length());
    }
    fieldHashes = Map.copyOf(Objects.requireNonNull(fieldHashes, "fieldHashes"));
  }

  /** A fingerprint with no per-field hashes (raw bodies, or a stored record that kept only the hash). */
  public static Fingerprint ofHash(String hash) {
    return new Fingerprint(hash, Map.of());
  }

  /** Whether the two fingerprints describe the same request. Only the overall hash counts. */
  public boolean matches(Fingerprint other) {
    return hash.equals(other.hash);
  }

  /**
   * The top-level members whose values differ between the two requests, sorted; members present in only one of
   * them count as differing. Empty when either side has no field hashes (the bodies then differ as a whole).
   */
  public List<String> differingFields(Fingerprint other) {
    if (fieldHashes.isEmpty() || other.fieldHashes.isEmpty()) {
      return List.of();
    }
    TreeSet<String> names = new TreeSet<>(fieldHashes.keySet());
    names.addAll(other.fieldHashes.keySet());
    List<String> differing = new ArrayList<>();
    for (String name : names) {
      if (!Objects.equals(fieldHashes.get(name), other.fieldHashes.get(name))) {
        differing.add(name);
      }
    }
    return differing;
  }

  /** The field hashes in name order, for stable storage. */
  public Map<String, String> sortedFieldHashes() {
    return new TreeMap<>(fieldHashes);
  }
}
