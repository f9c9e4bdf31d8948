package dev.idem.examples.payments;

/** A client of the service: its API key and the tenant the key authenticates. */
record Caller(String apiKey, String tenant) {}
