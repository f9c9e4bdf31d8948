package dev.idem.servlet;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * {@link IdempotencyFilterFuzzTest}'s hostile requests on embedded Tomcat (the reference service's container) and
 * PostgreSQL, in a schema of its own: the database that refuses a NUL in text, which H2 stores. Fewer tries than on
 * H2 and Jetty, since each request costs a few round trips to the database.
 */
@AddLifecycleHook(FuzzTries.class)
class PostgresIdempotencyFilterFuzzTest {
  private static TestService service;

  @BeforeContainer
  static void start() throws Exception {
    service = new TestService(TestService.DB_POSTGRES_OWN_SCHEMA, TestService.TOMCAT, b -> b);
  }

  @AfterContainer
  static void stop() throws Exception {
    service.close();
  }

  @Property(tries = 1_500)
  void hostileRequestsNeverGetA5xxAndARefusedOneLeavesNothing(
      @ForAll("requests") IdempotencyFilterFuzzTest.HostileRequest request) throws Exception {
    IdempotencyFilterFuzzTest.check(service, request);
  }

  @Provide
  Arbitrary<IdempotencyFilterFuzzTest.HostileRequest> requests() {
    return IdempotencyFilterFuzzTest.hostileRequests();
  }
}
