package dev.idem.core;

import java.util.List;

/**
 * The key was reused with a different request. Never retry: send the new request with a new key. Maps to 422
 * {@code CONFLICT.idempotency.payload_mismatch}.
 */
public class PayloadMismatchException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final List<String> differingFields;

  public PayloadMismatchException(RecordKey key, List<String> differingFields) {
    super("key '" + key.key() + "' of " + key.operation() + " was first used with a different request"
        + (differingFields.isEmpty() ? "" : "; fields that differ: " + differingFields)
        + ". Use a new key for a new request.");
    this.key = key;
    this.differingFields = List.copyOf(differingFields);
  }

  public RecordKey key() {
    return key;
  }

  public List<String> differingFields() {
    return differingFields;
  }
}
