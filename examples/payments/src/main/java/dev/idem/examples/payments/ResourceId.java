package dev.idem.examples.payments;

import dev.idem.core.UuidV7;

/** Identifiers of the service's resources: a type prefix and a time-ordered UUIDv7 in hex ({@code pay_0190...}). */
public final class ResourceId {
  private ResourceId() {}

  public static String next(String prefix) {
    return prefix + "_" + UuidV7.next().toString().replace("-", "");
  }
}
