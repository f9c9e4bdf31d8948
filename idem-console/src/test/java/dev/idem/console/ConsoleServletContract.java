package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.console.internal.Json;
import dev.idem.core.Checkpoint;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxRelay;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link ConsoleServlet} over real HTTP in embedded Jetty 12, on a real database (one subclass per database): the
 * default authorizer's refusal, the allowed operator, the Host allow-list, cross-site refusals, the headers, the
 * input limits, and every action with its audit. Two consoles share the server: {@code /ops/console} with a bearer
 * token, {@code /default/console} as mounted without an authorizer. Each test uses keys and events of its own.
 * Two more, with the token: {@code /sealed/console} with encryption at rest under a key that did not seal some
 * records, {@code /broken/console} whose relay fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConsoleServletContract {
  private static final String TOKEN = "console-token-" + UUID.randomUUID();
  private static final String OPERATION = "POST /payments";
  private static final Pattern INLINE_SCRIPT = Pattern.compile("<script(?![^>]*\\bsrc=)|\\son[a-z]+\\s*=");

  private final List<ConsoleAction> audit = new CopyOnWriteArrayList<>();
  private final AtomicBoolean endpointUp = new AtomicBoolean(false);
  private HikariDataSource dataSource;
  private JdbcIdempotencyStore store;
  /** The store with encryption under a key the sealed console does not hold. */
  private EncryptedIdempotencyStore sealing;
  private Outbox outbox;
  private OutboxRelay relay;
  private Server server;
  private int port;
  private HttpClient http;

  /** The database, reachable (a test never skips). */
  protected abstract HikariDataSource open();

  /** The suffix of this database's tables. */
  protected abstract String tables();

  @BeforeAll
  void start() throws Exception {
    dataSource = open();
    String records = "idem_console_records_" + tables();
    String events = "idem_console_outbox_" + tables();
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + records + "_audit");
      st.execute("DROP TABLE IF EXISTS " + records);
      st.execute("DROP TABLE IF EXISTS " + events + "_attempt");
      st.execute("DROP TABLE IF EXISTS " + events);
    }
    store = JdbcIdempotencyStore.builder(dataSource).table(records).createSchemaIfMissing(true).build();
    Idem idem = Idem.builder().store(store).build();
    outbox = Outbox.builder(JdbcOutboxStore.builder(dataSource).table(events).createSchemaIfMissing(true).build())
        .build();
    relay = OutboxRelay.builder(outbox).name("console-test")
        .route("hook", message -> endpointUp.get() ? DeliveryResult.delivered()
            : DeliveryResult.retry("the endpoint answered 500", 500), 1)
        .build();
    ConsoleServlet ops = ConsoleServlet.builder(idem).outbox(outbox, relay).search(JdbcRecordSearch.of(store))
        .authorizer(ConsoleAuthorizer.bearerToken(TOKEN, "alice")).audit(audit::add)
        .hints(r -> r.state() == RecordState.UNCERTAIN ? Map.of("remote key", r.derive("charge")) : Map.of())
        .trustedOrigins(List.of("https://ops.example.com", "HTTP://Proxy.Example.com:8080")).build();
    ConsoleServlet unconfigured = ConsoleServlet.builder(idem).build();
    sealing = EncryptedIdempotencyStore.wrap(store, Encryption.with(Keyring.generate("retired")), IdemListener.NOOP);
    Idem sealed = Idem.builder().store(store).encryption(Encryption.with(Keyring.generate("current"))).build();
    ConsoleServlet sealedConsole = ConsoleServlet.builder(sealed).search(JdbcRecordSearch.of(store))
        .authorizer(ConsoleAuthorizer.bearerToken(TOKEN, "alice")).audit(audit::add)
        .hints(r -> Map.of("remote key", r.derive("charge"))).build();
    ConsoleServlet broken = ConsoleServlet.builder(idem).outbox(outbox, () -> {
      throw new IllegalStateException("the relay is away");
    }).authorizer(ConsoleAuthorizer.bearerToken(TOKEN, "alice")).audit(audit::add).build();
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(ops), "/ops/console/*");
    context.addServlet(new ServletHolder(unconfigured), "/default/console/*");
    context.addServlet(new ServletHolder(sealedConsole), "/sealed/console/*");
    context.addServlet(new ServletHolder(broken), "/broken/console/*");
    server.setHandler(context);
    server.start();
    port = connector.getLocalPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (relay != null) {
      relay.close();
    }
    if (dataSource != null) {
      dataSource.close();
    }
  }

  // ---------------------------------------------------------------- access

  @Test
  void theDefaultAuthorizerRefusesEveryoneAndSaysHowToConfigureIt() throws Exception {
    Answer withToken = send(get("/default/console/api/session").header("Authorization", "Bearer " + TOKEN));
    Answer without = send(get("/default/console/api/records?state=any"));
    Answer page = send(get("/default/console/"));

    for (Answer a : List.of(withToken, without)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(403);
      assertThat(a.code()).isEqualTo("CONSOLE.not_configured");
      assertThat(a.json().get("detail").toString()).contains("ConsoleAuthorizer", "idem.console", "docs/console.md");
    }
    assertThat(page.status()).as("the page holds no data").isEqualTo(200);
  }

  @Test
  void withoutTheTokenTheApiIs401AndWithItTheOperatorIsNamed() throws Exception {
    Answer none = send(get("/ops/console/api/session"));
    Answer wrong = send(get("/ops/console/api/session").header("Authorization", "Bearer not-" + TOKEN));
    Answer right = send(api("/api/session"));
    Answer twice = send(api("/api/session").header("Authorization", "Bearer " + TOKEN));

    for (Answer a : List.of(none, wrong, twice)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(401);
      assertThat(a.code()).isEqualTo("AUTH.unauthenticated");
      assertThat(a.header("WWW-Authenticate")).startsWith("Bearer");
    }
    assertThat(right.status()).as(right.toString()).isEqualTo(200);
    assertThat(right.json()).containsEntry("operator", "alice").containsEntry("outbox", true)
        .containsEntry("metrics", false).containsEntry("store", store.name());
    assertThat(send(api("/api/metrics")).status()).as("no metrics given").isEqualTo(404);
  }

  @Test
  void aHostOutsideTheAllowListIsRefusedEvenWithTheToken() throws Exception {
    String rebound = raw("GET /ops/console/api/session HTTP/1.1\r\nHost: attacker.example:" + port
        + "\r\nAuthorization: Bearer " + TOKEN + "\r\nConnection: close\r\n\r\n");
    String page = raw("GET /ops/console/ HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n");
    String loopback = raw("GET /ops/console/api/session HTTP/1.1\r\nHost: localhost:" + port
        + "\r\nAuthorization: Bearer " + TOKEN + "\r\nConnection: close\r\n\r\n");

    assertThat(rebound).startsWith("HTTP/1.1 403").contains("CONSOLE.host_not_allowed", "attacker.example")
        .doesNotContain("\"operator\"");
    assertThat(page).startsWith("HTTP/1.1 403").contains("CONSOLE.host_not_allowed");
    assertThat(loopback).startsWith("HTTP/1.1 200").contains("\"operator\":\"alice\"");
  }

  @Test
  void crossSiteRequestsAreRefusedAndActionsNeedTheConsolesHeader() throws Exception {
    RecordKey key = uncertain("cross-site");
    long version = store.find(key).orElseThrow().version();
    String resolve = "/api/records/resolve?" + keyQuery(key) + "&version=" + version;
    String body = "{\"action\":\"fail\",\"status\":409,\"reason\":\"forged\"}";

    Answer crossSite = send(api(resolve).header("Sec-Fetch-Site", "cross-site").header("X-Idem-Console", "1")
        .POST(HttpRequest.BodyPublishers.ofString(body)));
    Answer sameSite = send(api("/api/session").header("Sec-Fetch-Site", "same-site"));
    Answer otherOrigin = send(api(resolve).header("Origin", "http://attacker.example").header("X-Idem-Console", "1")
        .POST(HttpRequest.BodyPublishers.ofString(body)));
    Answer noHeader = send(api(resolve).header("Origin", "http://127.0.0.1:" + port)
        .POST(HttpRequest.BodyPublishers.ofString(body)));
    Answer ownOrigin = send(api("/api/session").header("Origin", "http://127.0.0.1:" + port)
        .header("Sec-Fetch-Site", "same-origin"));

    for (Answer a : List.of(crossSite, sameSite, otherOrigin)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(403);
      assertThat(a.code()).isEqualTo("CONSOLE.cross_site");
    }
    assertThat(noHeader.status()).isEqualTo(403);
    assertThat(noHeader.code()).isEqualTo("CONSOLE.action_header_missing");
    assertThat(ownOrigin.status()).as(ownOrigin.toString()).isEqualTo(200);
    assertThat(store.find(key).orElseThrow().state()).as("nothing was resolved").isEqualTo(RecordState.UNCERTAIN);
    assertThat(audit).as("refused before the authorizer: not actions").noneMatch(a -> a.target().contains(
        key.key().value()));
  }

  @Test
  void aTrustedOriginPassesWhereTheProxyRewroteTheHostAndAForeignOneIsStillRefused() throws Exception {
    RecordKey key = uncertain("trusted-origin");
    long version = store.find(key).orElseThrow().version();
    String resolve = "/api/records/resolve?" + keyQuery(key) + "&version=" + version;
    String body = "{\"action\":\"fail\",\"status\":409,\"reason\":\"declined at the bank\"}";

    // the Host the servlet sees is 127.0.0.1:<port>, as a proxy that rewrites it would leave it
    Answer foreign = send(action(resolve, body).header("Origin", "https://attacker.example"));
    Answer otherScheme = send(action(resolve, body).header("Origin", "http://ops.example.com"));
    Answer otherPort = send(action(resolve, body).header("Origin", "https://ops.example.com:8443"));
    Answer suffix = send(action(resolve, body).header("Origin", "https://ops.example.com.attacker.example"));
    Answer opaque = send(action(resolve, body).header("Origin", "null"));
    Answer proxied = send(action("/api/outbox/" + UUID.randomUUID() + "/replay", "")
        .header("Origin", "http://proxy.example.com:8080"));
    Answer trusted = send(action(resolve, body).header("Origin", "https://ops.example.com")
        .header("Sec-Fetch-Site", "same-origin"));

    for (Answer a : List.of(foreign, otherScheme, otherPort, suffix, opaque)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(403);
      assertThat(a.code()).isEqualTo("CONSOLE.cross_site");
    }
    assertThat(proxied.code()).as("past the origin check: the event is unknown").isEqualTo("NOT_FOUND.outbox_event");
    assertThat(trusted.status()).as(trusted.toString()).isEqualTo(200);
    assertThat(store.find(key).orElseThrow().state()).isEqualTo(RecordState.FAILED);
    assertThat(actionsOn(key.key().value())).extracting(ConsoleAction::operator, ConsoleAction::outcome)
        .containsExactly(tuple("alice", "done"));
  }

  @Test
  void everyAnswerCarriesTheStrictHeaders() throws Exception {
    Answer redirect = send(get("/ops/console"));
    Answer page = send(get("/ops/console/"));
    Answer script = send(get("/ops/console/console.js"));
    Answer style = send(get("/ops/console/console.css"));
    Answer missing = send(get("/ops/console/secrets.txt"));
    Answer post = send(get("/ops/console/").POST(HttpRequest.BodyPublishers.ofString("")));
    Answer data = send(api("/api/session"));
    Answer refused = send(get("/ops/console/api/session"));

    assertThat(redirect.status()).isEqualTo(302);
    assertThat(redirect.header("Location")).isEqualTo("/ops/console/");
    assertThat(page.text()).contains("<script src=\"console.js\" defer></script>");
    assertThat(INLINE_SCRIPT.matcher(page.text()).find()).as("no inline script or event handler").isFalse();
    assertThat(script.header("Content-Type")).startsWith("text/javascript");
    assertThat(script.text()).doesNotContain("innerHTML", "outerHTML", "insertAdjacentHTML", "eval(");
    assertThat(style.header("Content-Type")).startsWith("text/css");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(post.status()).isEqualTo(405);
    assertThat(post.header("Allow")).isEqualTo("GET, HEAD");
    for (Answer a : List.of(redirect, page, script, style, missing, data, refused)) {
      assertThat(a.header("Content-Security-Policy")).as(a.toString())
          .isEqualTo(ConsoleServlet.CONTENT_SECURITY_POLICY).doesNotContain("unsafe-inline", "unsafe-eval");
      assertThat(a.header("Cache-Control")).isEqualTo("no-store");
      assertThat(a.header("X-Content-Type-Options")).isEqualTo("nosniff");
      assertThat(a.header("X-Frame-Options")).isEqualTo("DENY");
    }
  }

  @Test
  void inputsAreBounded() throws Exception {
    RecordKey key = uncertain("limits");
    long version = store.find(key).orElseThrow().version();
    String resolve = "/api/records/resolve?" + keyQuery(key) + "&version=" + version;

    Answer longQuery = send(api("/api/records?state=any&key=" + "k".repeat(ConsoleServlet.MAX_QUERY)));
    Answer longKey = send(api("/api/records?state=any&key=" + "k".repeat(256)));
    Answer bigPage = send(api("/api/records?limit=201"));
    Answer notAscii = send(api("/api/records?state=any&key=" + encode("café")));
    Answer badCursor = send(api("/api/records?after=%21%21"));
    Answer bigBody = send(action(resolve, "{\"action\":\"fail\",\"status\":409,\"reason\":\""
        + "r".repeat(ConsoleServlet.MAX_BODY) + "\"}"));
    Answer longReason = send(action(resolve, "{\"action\":\"fail\",\"status\":409,\"reason\":\""
        + "r".repeat(1001) + "\"}"));
    Answer deep = send(action(resolve, "[".repeat(100) + "]".repeat(100)));
    Answer unknownField = send(action(resolve, "{\"action\":\"retry\",\"reason\":\"x\",\"actor\":\"mallory\"}"));
    Answer badStatus = send(action(resolve, "{\"action\":\"complete\",\"status\":404,\"reason\":\"x\"}"));

    assertThat(longQuery.status()).isEqualTo(414);
    assertThat(longKey.code()).isEqualTo("VALIDATION.key");
    assertThat(bigPage.code()).isEqualTo("VALIDATION.limit");
    assertThat(notAscii.code()).isEqualTo("VALIDATION.key");
    assertThat(badCursor.code()).isEqualTo("VALIDATION.after");
    assertThat(bigBody.status()).isEqualTo(413);
    assertThat(longReason.code()).isEqualTo("VALIDATION.reason");
    assertThat(deep.code()).isEqualTo("VALIDATION.body");
    assertThat(unknownField.code()).as("the actor is the authorizer's, never the body's").isEqualTo("VALIDATION.actor");
    assertThat(badStatus.code()).isEqualTo("VALIDATION.status");
    assertThat(store.find(key).orElseThrow().state()).isEqualTo(RecordState.UNCERTAIN);
  }

  // ---------------------------------------------------------------- records

  @Test
  void recordsAreFoundByAPartOfTheirKeyAndAnUncertainOneIsResolvedWithTheOperatorInItsAudit() throws Exception {
    RecordKey key = uncertain("resolve");
    long version = store.find(key).orElseThrow().version();
    String tag = key.key().value().substring(key.key().value().length() - 12);

    Answer found = send(api("/api/records?state=any&key=" + tag));
    Answer uncertainOnly = send(api("/api/records?state=uncertain&limit=200"));
    Answer resolved = send(action("/api/records/resolve?" + keyQuery(key) + "&version=" + version,
        "{\"action\":\"complete\",\"status\":201,\"body\":{\"id\":\"pay_1\",\"amount\":100},\"reason\":\"charged\"}"));
    Answer again = send(action("/api/records/resolve?" + keyQuery(key) + "&version=" + version,
        "{\"action\":\"retry\",\"reason\":\"twice\"}"));
    Answer history = send(api("/api/records/history?" + keyQuery(key)));

    List<?> records = (List<?>) found.json().get("records");
    assertThat(records).hasSize(1);
    assertThat(map(records.get(0))).containsEntry("state", "uncertain").containsEntry("operation", OPERATION)
        .containsEntry("recovery_point", "charge").containsEntry("unreadable", false).doesNotContainKey("checkpoint")
        .containsEntry("hints", Map.of("remote key", store.find(key).orElseThrow().derive("charge")));
    assertThat(((List<?>) uncertainOnly.json().get("records"))).anyMatch(r -> key.key().value().equals(
        ((Map<?, ?>) r).get("key")));
    assertThat(resolved.status()).as(resolved.toString()).isEqualTo(200);
    assertThat(resolved.json()).containsEntry("actor", "alice (console)").containsEntry("to", "completed");
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.code()).isEqualTo("CONFLICT.record.not_uncertain");
    IdempotencyRecord now = store.find(key).orElseThrow();
    assertThat(now.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(now.response().status()).isEqualTo(201);
    assertThat(new String(now.response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"id\":\"pay_1\",\"amount\":100}");
    List<?> entries = (List<?>) history.json().get("history");
    assertThat(entries).hasSize(1);
    assertThat(map(entries.get(0))).containsEntry("actor", "alice (console)").containsEntry("reason", "charged");
    assertThat(actionsOn(key.key().value())).extracting(ConsoleAction::operator, ConsoleAction::action,
        ConsoleAction::outcome).containsExactly(
            tuple("alice", "record.resolve", "done"),
            tuple("alice", "record.resolve", "CONFLICT.record.not_uncertain"));
  }

  @Test
  void anEvictionNeedsTheVersionTheOperatorSawAndIsAudited() throws Exception {
    RecordKey key = uncertain("evict");
    long version = store.find(key).orElseThrow().version();
    String evict = "/api/records?" + keyQuery(key) + "&version=";

    Answer stale = send(api(evict + (version + 1)).header("X-Idem-Console", "1").DELETE());
    Answer evicted = send(api(evict + version).header("X-Idem-Console", "1").DELETE());
    Answer gone = send(api(evict + version).header("X-Idem-Console", "1").DELETE());

    assertThat(stale.code()).isEqualTo("CONFLICT.record.changed");
    assertThat(evicted.status()).as(evicted.toString()).isEqualTo(200);
    assertThat(evicted.json()).containsEntry("evicted", true).containsEntry("state", "uncertain");
    assertThat(gone.code()).isEqualTo("NOT_FOUND.idempotency_record");
    assertThat(store.find(key)).isEmpty();
    assertThat(actionsOn(key.key().value())).extracting(ConsoleAction::outcome).containsExactly(
        "CONFLICT.record.changed", "done", "NOT_FOUND.idempotency_record");
    assertThat(actionsOn(key.key().value())).allMatch(a -> a.operator().equals("alice")
        && a.action().equals("record.evict"));
  }

  @Test
  void aRecordWhoseSealedDataDoesNotOpenIsListedMarkedRefusedAResolutionAndEvicted() throws Exception {
    RecordKey key = uncertain(sealing, "unreadable");
    long version = store.find(key).orElseThrow().version();
    String tag = key.key().value().substring(key.key().value().length() - 12);

    Answer found = send(sealed("/api/records?state=any&key=" + tag));
    Answer any = send(sealed("/api/records?state=any&limit=200"));
    Answer uncertainOnly = send(sealed("/api/records?state=uncertain&limit=200"));
    Answer resolve = send(sealed("/api/records/resolve?" + keyQuery(key) + "&version=" + version)
        .header("X-Idem-Console", "1").POST(HttpRequest.BodyPublishers.ofString(
            "{\"action\":\"fail\",\"status\":409,\"reason\":\"no key\"}")));
    Answer evicted = send(sealed("/api/records?" + keyQuery(key) + "&version=" + version)
        .header("X-Idem-Console", "1").DELETE());

    assertThat(found.status()).as(found.toString()).isEqualTo(200);
    List<?> records = (List<?>) found.json().get("records");
    assertThat(records).hasSize(1);
    assertThat(map(records.get(0))).containsEntry("key", key.key().value()).containsEntry("state", "uncertain")
        .containsEntry("unreadable", true).containsEntry("hints", Map.of()).doesNotContainKey("checkpoint");
    assertThat(any.status()).as(any.toString()).isEqualTo(200);
    assertThat(uncertainOnly.status()).as(uncertainOnly.toString()).isEqualTo(200);
    assertThat((List<?>) uncertainOnly.json().get("records")).anyMatch(r -> key.key().value().equals(
        ((Map<?, ?>) r).get("key")) && Boolean.TRUE.equals(((Map<?, ?>) r).get("unreadable")));
    assertThat(resolve.status()).as(resolve.toString()).isEqualTo(409);
    assertThat(resolve.code()).isEqualTo("CONFLICT.record.unreadable");
    assertThat(resolve.json().get("detail").toString()).contains("evict");
    assertThat(evicted.status()).as(evicted.toString()).isEqualTo(200);
    assertThat(evicted.json()).containsEntry("evicted", true).containsEntry("state", "uncertain");
    assertThat(store.find(key)).isEmpty();
    assertThat(actionsOn(key.key().value())).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("record.resolve", "CONFLICT.record.unreadable"), tuple("record.evict", "done"));
  }

  @Test
  void aRecordWhoseOnlySealedPartIsItsFieldHashesIsMarkedAndNotResolved() throws Exception {
    RecordKey key = uncertain(sealing, "fields-unreadable",
        new Fingerprint("a".repeat(64), Map.of("amount", "00000000000000a5")), Checkpoint.empty());
    IdempotencyRecord stored = store.find(key).orElseThrow();
    String tag = key.key().value().substring(key.key().value().length() - 12);

    Answer found = send(sealed("/api/records?state=any&key=" + tag));
    Answer resolve = send(sealed("/api/records/resolve?" + keyQuery(key) + "&version=" + stored.version())
        .header("X-Idem-Console", "1").POST(HttpRequest.BodyPublishers.ofString(
            "{\"action\":\"fail\",\"status\":409,\"reason\":\"no key\"}")));

    assertThat(stored.checkpoint().isEmpty()).isTrue();
    assertThat(stored.fingerprint().fieldHashes()).containsOnlyKeys(EncryptedIdempotencyStore.SEALED_FIELDS);
    assertThat(found.status()).as(found.toString()).isEqualTo(200);
    assertThat((List<?>) found.json().get("records")).singleElement()
        .satisfies(r -> assertThat(map(r)).containsEntry("unreadable", true));
    assertThat(resolve.status()).as(resolve.toString()).isEqualTo(409);
    assertThat(resolve.code()).isEqualTo("CONFLICT.record.unreadable");
    assertThat(store.find(key).orElseThrow().state()).isEqualTo(RecordState.UNCERTAIN);
  }

  @Test
  void aBodyOverTheLimitIsRefusedOnEveryActionAndChangesNothing() throws Exception {
    RecordKey key = uncertain("big-body");
    long version = store.find(key).orElseThrow().version();
    String big = "x".repeat(ConsoleServlet.MAX_BODY + 1024);
    UUID event = enqueue("order-" + UUID.randomUUID());
    endpointUp.set(false);
    relay.runOnce();

    Answer evict = send(api("/api/records?" + keyQuery(key) + "&version=" + version).header("X-Idem-Console", "1")
        .method("DELETE", HttpRequest.BodyPublishers.ofString(big)));
    Answer discard = send(action("/api/outbox/" + event + "/discard", big));
    Answer small = send(api("/api/records?" + keyQuery(key) + "&version=" + version).header("X-Idem-Console", "1")
        .method("DELETE", HttpRequest.BodyPublishers.ofString("{}")));

    assertThat(evict.status()).as(evict.toString()).isEqualTo(413);
    assertThat(evict.code()).isEqualTo("VALIDATION.request_too_large");
    assertThat(discard.status()).as(discard.toString()).isEqualTo(413);
    assertThat(outbox.find(event).orElseThrow().status().name()).isEqualTo("DEAD");
    assertThat(small.status()).as("a body within the limit is read and ignored").isEqualTo(200);
    assertThat(actionsOn(key.key().value())).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("record.evict", "VALIDATION.request_too_large"), tuple("record.evict", "done"));
    assertThat(actionsOn(event.toString())).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("outbox.discard", "VALIDATION.request_too_large"));
  }

  // ---------------------------------------------------------------- outbox

  @Test
  void outboxActionsWithoutAnEventIdAre404AndAudited() throws Exception {
    int before = actionsOn("(no event id)").size();

    Answer discard = send(action("/api/outbox/discard", ""));
    Answer replayNoStatus = send(action("/api/outbox/replay", ""));
    Answer getDiscard = send(api("/api/outbox/discard"));

    assertThat(discard.status()).as(discard.toString()).isEqualTo(404);
    assertThat(discard.code()).isEqualTo("NOT_FOUND.outbox_event");
    assertThat(replayNoStatus.status()).as("the bulk replay, which needs a status").isEqualTo(400);
    assertThat(replayNoStatus.code()).isEqualTo("VALIDATION.status");
    assertThat(getDiscard.status()).isEqualTo(405);
    assertThat(actionsOn("(no event id)").subList(before, actionsOn("(no event id)").size()))
        .extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("outbox.discard", "NOT_FOUND.outbox_event"));
  }

  @Test
  void aBulkReplayTakesDeadLettersOnly() throws Exception {
    String type = "order.refunded-" + UUID.randomUUID().toString().substring(0, 8);
    UUID dead = outbox.inTransaction(tx -> outbox.enqueue(tx, OutboxEvent.builder(type)
        .aggregate("order", "bulk").payload("{}").destination("hook:orders").build()));
    endpointUp.set(false);
    relay.runOnce();

    Answer delivered = send(action("/api/outbox/replay?status=delivered&type=" + type, ""));
    Answer discarded = send(action("/api/outbox/replay?status=discarded&type=" + type, ""));
    Answer pending = send(action("/api/outbox/replay?status=pending&type=" + type, ""));
    Answer replayed = send(action("/api/outbox/replay?status=dead&type=" + type, ""));

    for (Answer a : List.of(delivered, discarded, pending)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(400);
      assertThat(a.code()).isEqualTo("VALIDATION.status");
    }
    assertThat(replayed.status()).as(replayed.toString()).isEqualTo(200);
    assertThat(replayed.json()).containsEntry("status", "dead");
    assertThat(((Number) replayed.json().get("replayed")).intValue()).isEqualTo(1);
    assertThat(outbox.find(dead).orElseThrow().status().name()).isEqualTo("PENDING");
    assertThat(actionsOn("type=" + type)).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("outbox.replay_all", "VALIDATION.status"),
            tuple("outbox.replay_all", "VALIDATION.status"), tuple("outbox.replay_all", "VALIDATION.status"),
            tuple("outbox.replay_all", "done"));
  }

  @Test
  void anUnforeseenFailureIsAProblemAndAnActionFailingSoIsAudited() throws Exception {
    UUID event = enqueue("order-" + UUID.randomUUID());
    endpointUp.set(false);
    relay.runOnce();

    Answer stats = send(get("/broken/console/api/outbox/stats").header("Authorization", "Bearer " + TOKEN));
    Answer replay = send(get("/broken/console/api/outbox/" + event + "/replay")
        .header("Authorization", "Bearer " + TOKEN).header("X-Idem-Console", "1")
        .POST(HttpRequest.BodyPublishers.noBody()));

    for (Answer a : List.of(stats, replay)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(500);
      assertThat(a.header("Content-Type")).startsWith("application/problem+json");
      assertThat(a.code()).isEqualTo("INTERNAL.console");
      assertThat(a.text()).doesNotContain("the relay is away");
    }
    assertThat(actionsOn(event.toString())).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("outbox.replay", "INTERNAL.console"));
  }


  @Test
  void aDeadLetterIsListedReplayedAndDeliveredAndAnotherDiscardedWithTheOperatorAudited() throws Exception {
    String aggregate = "order-" + UUID.randomUUID();
    UUID replayed = enqueue(aggregate);
    UUID discarded = enqueue(aggregate);
    endpointUp.set(false);
    relay.runOnce();

    Answer dead = send(api("/api/outbox?status=dead&limit=500"));
    Answer stats = send(api("/api/outbox/stats"));
    Answer replay = send(action("/api/outbox/" + replayed + "/replay", ""));
    Answer discard = send(action("/api/outbox/" + discarded + "/discard", ""));
    Answer discardAgain = send(action("/api/outbox/" + discarded + "/discard", ""));
    endpointUp.set(true);
    relay.runOnce();
    Answer after = send(api("/api/outbox/" + replayed));
    Answer unknown = send(api("/api/outbox/" + UUID.randomUUID()));
    Answer get = send(api("/api/outbox/" + replayed + "/replay"));

    assertThat(((List<?>) dead.json().get("events"))).filteredOn(e -> aggregate.equals(((Map<?, ?>) e)
        .get("aggregate_id"))).hasSize(2).allMatch(e -> ((Map<?, ?>) e).get("last_error").toString().contains("500"))
        .allMatch(e -> !((Map<?, ?>) e).containsKey("payload") && ((Number) ((Map<?, ?>) e).get("payload_bytes"))
            .intValue() == ("{\"order\":\"" + aggregate + "\"}").getBytes(StandardCharsets.UTF_8).length);
    assertThat(((Map<?, ?>) stats.json().get("counts")).get("dead")).isNotEqualTo(0L);
    assertThat(replay.status()).as(replay.toString()).isEqualTo(200);
    assertThat(replay.json()).containsEntry("status", "pending");
    assertThat(discard.json()).containsEntry("status", "discarded");
    assertThat(discardAgain.code()).isEqualTo("CONFLICT.outbox.finished");
    assertThat(after.json()).containsEntry("status", "delivered");
    assertThat(unknown.code()).isEqualTo("NOT_FOUND.outbox_event");
    assertThat(get.status()).isEqualTo(405);
    assertThat(actionsOn(replayed.toString())).extracting(ConsoleAction::operator, ConsoleAction::action,
        ConsoleAction::outcome).containsExactly(tuple("alice", "outbox.replay", "done"));
    assertThat(actionsOn(discarded.toString())).extracting(ConsoleAction::action, ConsoleAction::outcome)
        .containsExactly(tuple("outbox.discard", "done"),
            tuple("outbox.discard", "CONFLICT.outbox.finished"));
  }

  // ---------------------------------------------------------------- helpers

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object json) {
    return (Map<String, Object>) json;
  }

  private List<ConsoleAction> actionsOn(String part) {
    return audit.stream().filter(a -> a.target().contains(part)).toList();
  }

  private UUID enqueue(String aggregate) throws Exception {
    return outbox.inTransaction(tx -> outbox.enqueue(tx, OutboxEvent.builder("order.paid")
        .aggregate("order", aggregate).payload("{\"order\":\"" + aggregate + "\"}").destination("hook:orders")
        .build()));
  }

  /** An uncertain record of a key of its own, inserted in the store. */
  private RecordKey uncertain(String name) throws Exception {
    return uncertain(store, name);
  }

  /** An uncertain record of a key of its own, inserted through {@code into} (which may seal it). */
  private RecordKey uncertain(IdempotencyStore into, String name) throws Exception {
    return uncertain(into, name, Fingerprint.ofHash("a".repeat(64)), Checkpoint.of(Map.of("payment_id", "pay_1")));
  }

  private RecordKey uncertain(IdempotencyStore into, String name, Fingerprint fingerprint, Checkpoint checkpoint)
      throws Exception {
    RecordKey key = RecordKey.of("tenant-a", OPERATION, name + "-" + UUID.randomUUID().toString().replace("-", ""));
    Instant at = Instant.now();
    IdempotencyRecord record = IdempotencyRecord.claimed(key, fingerprint, "worker-1", at,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(1))
        .withRecoveryPoint("charge", checkpoint, at.plusSeconds(30), at)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, at);
    boolean inserted = into.inTransaction(tx -> into.insert(tx, record));
    assertThat(inserted).isTrue();
    return key;
  }

  private static String keyQuery(RecordKey key) {
    return "scope=" + encode(key.scope().value()) + "&operation=" + encode(key.operation().name()) + "&key="
        + encode(key.key().value());
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private HttpRequest.Builder get(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30));
  }

  /** A call to the operator's console with the token. */
  private HttpRequest.Builder api(String path) {
    return get("/ops/console" + path).header("Authorization", "Bearer " + TOKEN);
  }

  /** A call to the console with encryption at rest under another key than some records'. */
  private HttpRequest.Builder sealed(String path) {
    return get("/sealed/console" + path).header("Authorization", "Bearer " + TOKEN);
  }

  private HttpRequest.Builder action(String path, String json) {
    return api(path).header("X-Idem-Console", "1").header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json));
  }

  private Answer send(HttpRequest.Builder request) throws Exception {
    HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    return new Answer(r.statusCode(), r.headers().map(), r.body());
  }

  /** One HTTP/1.1 exchange over a socket, for headers the JDK's client will not send (Host). */
  private String raw(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private record Answer(int status, Map<String, List<String>> headers, String text) {
    String header(String name) {
      return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name)).findFirst()
          .map(e -> e.getValue().get(0)).orElse(null);
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> json() {
      return (Map<String, Object>) Json.read(text);
    }

    String code() {
      return (String) json().get("code");
    }
  }
}
