package dev.idem.outbox.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.memory.InMemoryOutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Routing, serialising and failure rules of {@link Events}, and the wake-up after commit, on the in-memory store. */
class EventsTest {
  interface Audited {}

  static class Base {
    final String id;

    Base(String id) {
      this.id = id;
    }
  }

  static final class Derived extends Base implements Audited {
    Derived(String id) {
      super(id);
    }
  }

  record Marked(String id) implements Audited {}

  record Keyed(UUID id, String account) {}

  final Outbox outbox = Outbox.builder(new InMemoryOutboxStore()).orderedTypes(Set.of("keyed")).build();

  Events.Builder builder() {
    return Events.builder(outbox).serializer(e -> "{\"class\":\"" + e.getClass().getSimpleName() + "\"}");
  }

  @Test
  void theNearestRouteWinsAClassBeforeItsSuperclassesBeforeItsInterfaces() throws Exception {
    Events events = builder().route(EventRoute.of(Base.class, "base", "sink:base"))
        .route(EventRoute.of(Audited.class, "audited", "sink:audit")).build();
    assertThat(events.routeOf(Derived.class)).hasValueSatisfying(r -> assertThat(r.type()).isEqualTo("base"));
    assertThat(events.routeOf(Marked.class)).hasValueSatisfying(r -> assertThat(r.type()).isEqualTo("audited"));
    assertThat(events.routeOf(String.class)).isEmpty();

    events.inTransaction(tx -> {
      Events.publish(new Derived("d1"));
      Events.publish(new Marked("m1"));
      return null;
    });
    assertThat(outbox.list(OutboxQuery.all()).entries()).extracting(OutboxEntry::type, OutboxEntry::destination,
        OutboxEntry::payload).containsExactly(
            tuple("base", "sink:base", "{\"class\":\"Derived\"}"),
            tuple("audited", "sink:audit", "{\"class\":\"Marked\"}"));
  }

  @Test
  void aRouteGivesTheIdTheOrderingKeyAndTheHeaders() {
    UUID id = UUID.randomUUID();
    Events events = builder().route(EventRoute.of(Keyed.class, "keyed", "sink").orderedBy("account", Keyed::account)
        .id(Keyed::id).headers(e -> Map.of("x-account", e.account()))).build();
    OutboxEvent e = events.toOutboxEvent(new Keyed(id, "acc_1"));
    assertThat(e.id()).isEqualTo(id);
    assertThat(e.aggregateType()).isEqualTo("account");
    assertThat(e.aggregateId()).isEqualTo("acc_1");
    assertThat(e.headers()).containsEntry("x-account", "acc_1");
    assertThat(e.type()).isEqualTo("keyed");
  }

  @Test
  void aFinderRoutesClassesWithoutARouteOnceAndItsRoutesAreChecked() {
    Events events = builder().finder(c -> c == Marked.class
        ? Optional.of(EventRoute.of(Marked.class, "found", "sink")) : Optional.empty()).build();
    assertThat(events.routeOf(Marked.class)).hasValueSatisfying(r -> assertThat(r.type()).isEqualTo("found"));
    assertThat(events.routeOf(Keyed.class)).isEmpty();

    Events unordered = builder().finder(c -> Optional.of(EventRoute.of(Keyed.class, "not.ordered", "sink")
        .orderedBy("account", Keyed::account))).build();
    assertThatThrownBy(() -> unordered.routeOf(Keyed.class)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not order type 'not.ordered'");
  }

  @Test
  void badInputIsRefusedNamingWhatIsWrong() throws Exception {
    assertThatThrownBy(() -> Events.builder(outbox).route(EventRoute.of(Marked.class, "m", "sink")).build())
        .hasMessageContaining("serializer is required");
    assertThatThrownBy(() -> builder().build()).hasMessageContaining("at least one route");
    assertThatThrownBy(() -> builder().route(EventRoute.of(Marked.class, "a", "sink"))
        .route(EventRoute.of(Marked.class, "b", "sink"))).hasMessageContaining("has a route already");
    assertThatThrownBy(() -> EventRoute.of(Marked.class, "m", "no spaces")).hasMessageContaining("destination");
    assertThatThrownBy(() -> EventRoute.of(Marked.class, "", "sink")).hasMessageContaining("type");
    assertThatThrownBy(() -> EventRoute.of(Marked.class, "m", "sink").orderedBy("x".repeat(101), Marked::id))
        .hasMessageContaining("aggregateType");

    Events failing = Events.builder(outbox).serializer(e -> {
      throw new IllegalStateException("no mapper for it");
    }).route(EventRoute.of(Marked.class, "m", "sink")).build();
    assertThatThrownBy(() -> failing.toOutboxEvent(new Marked("x"))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(Marked.class.getName()).hasMessageContaining("no mapper for it");
    Events notJson = Events.builder(outbox).serializer(e -> "not json").route(EventRoute.of(Marked.class, "m", "sink"))
        .build();
    assertThatThrownBy(() -> notJson.inTransaction(tx -> Events.publish(new Marked("x"))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not JSON");
    Events noKey = builder().route(EventRoute.of(Keyed.class, "keyed", "sink").orderedBy("account", e -> null))
        .build();
    assertThatThrownBy(() -> noKey.toOutboxEvent(new Keyed(UUID.randomUUID(), "a")))
        .hasMessageContaining("the ordering key of event " + Keyed.class.getName());
    assertThat(outbox.list(OutboxQuery.all()).entries()).isEmpty();
  }

  @Test
  void publishUsesTheInnermostTransactionOnTheThread() throws Exception {
    Events outer = builder().route(EventRoute.of(Marked.class, "outer", "sink")).build();
    Events inner = builder().route(EventRoute.of(Marked.class, "inner", "sink")).build();
    outer.inTransaction(tx -> {
      inner.inTransaction(tx2 -> Events.publish(new Marked("1")));
      return Events.publish(new Marked("2"));
    });
    assertThat(outbox.list(OutboxQuery.all()).entries()).extracting(OutboxEntry::type)
        .containsExactly("inner", "outer");
    assertThatThrownBy(() -> Events.publish(new Marked("3"))).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("outside a transaction");
  }

  @Test
  void aCommitOfTheOutboxWakesItsRelayAndARollbackDoesNot() throws Exception {
    Events events = builder().route(EventRoute.of(Marked.class, "marked", "sink")).build();
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch second = new CountDownLatch(1);
    OutboxRelay relay = OutboxRelay.builder(outbox).route("sink", (OutboxMessage m) -> {
      (first.getCount() > 0 ? first : second).countDown();
      return DeliveryResult.delivered();
    }).pollInterval(Duration.ofMinutes(1)).build();
    events.inTransaction(tx -> Events.publish(new Marked("primer")));
    relay.start();
    try {
      assertThat(first.await(30, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> events.inTransaction(tx -> {
        Events.publish(new Marked("rolled back"));
        throw new IllegalStateException("no");
      })).hasMessage("no");
      events.inTransaction(tx -> Events.publish(new Marked("committed")));
      assertThat(second.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(outbox.list(OutboxQuery.all()).entries()).hasSize(2);
    } finally {
      relay.close();
    }
  }
}
