package dev.idem.core;

/**
 * A response larger than the operation's {@code maxResponseBytes} cannot be kept. The execution was rolled back
 * (atomic) or released, so nothing half-done is left behind.
 */
public class ResponseTooLargeException extends IdemException {
  private static final long serialVersionUID = 1L;

  public ResponseTooLargeException(RecordKey key, long size, int limit) {
    super("response of " + key.operation() + " for key '" + key.key() + "' is " + size + " bytes; the limit is "
        + limit + " (OperationPolicy.maxResponseBytes)");
  }
}
