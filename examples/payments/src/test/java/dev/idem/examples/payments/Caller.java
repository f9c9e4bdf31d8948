package dev.idem.examples.payments;

/** A client of the service: its API key and the tenant the key authenticates. */
public record Caller(String apiKey, String tenant) {
  /** The command-line argument that gives this caller its key. */
  public String argument() {
    return "--payments.api-keys." + apiKey + "=" + tenant;
  }
}
