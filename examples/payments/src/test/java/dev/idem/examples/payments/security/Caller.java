package dev.idem.examples.payments.security;

/** A client of the service: its API key and the tenant the key authenticates. */
record Caller(String apiKey, String tenant) {
  /** The command-line argument that gives this caller its key. */
  String argument() {
    return "--payments.api-keys." + apiKey + "=" + tenant;
  }
}
