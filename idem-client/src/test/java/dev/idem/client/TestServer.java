package dev.idem.client;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A JDK HttpServer on 127.0.0.1, port 0, that answers from a script: each request takes the next reply, and the last
 * reply repeats. Records every request it receives.
 */
final class TestServer implements AutoCloseable {
  /** One scripted answer; {@code drop} closes the connection without an answer (a connection failure). */
  record Reply(int status, Map<String, String> headers, String body, boolean drop) {
    static Reply status(int status) {
      return new Reply(status, Map.of(), "", false);
    }

    static Reply problem(int status, String code, Boolean retryable) {
      String json = "{\"type\":\"about:blank\",\"title\":\"t\",\"status\":" + status + ",\"detail\":\"detail of " + code
          + "\",\"code\":\"" + code + "\"" + (retryable == null ? "" : ",\"retryable\":" + retryable) + "}";
      return new Reply(status, Map.of("Content-Type", "application/problem+json"), json, false);
    }

    static Reply disconnect() {
      return new Reply(0, Map.of(), "", true);
    }

    Reply header(String name, String value) {
      Map<String, String> more = new LinkedHashMap<>(headers);
      more.put(name, value);
      return new Reply(status, more, body, drop);
    }
  }

  /** A request as the server saw it. */
  record Received(String method, String path, Headers headers, byte[] body) {
    String header(String name) {
      return headers.getFirst(name);
    }

    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  final List<Received> received = new CopyOnWriteArrayList<>();
  private final List<Reply> script = new ArrayList<>();
  private final HttpServer server;

  TestServer(Reply... replies) throws IOException {
    script.addAll(List.of(replies));
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.start();
  }

  synchronized void script(Reply... replies) {
    script.clear();
    script.addAll(List.of(replies));
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  List<String> headerValues(String name) {
    List<String> values = new ArrayList<>();
    for (Received r : received) {
      values.add(r.header(name));
    }
    return values;
  }

  private void handle(HttpExchange exchange) throws IOException {
    byte[] body = exchange.getRequestBody().readAllBytes();
    Headers copy = new Headers();
    copy.putAll(exchange.getRequestHeaders());
    received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), copy, body));
    Reply reply;
    synchronized (this) {
      reply = script.size() > 1 ? script.remove(0) : script.get(0);
    }
    if (reply.drop()) {
      exchange.close();
      return;
    }
    reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
    byte[] out = reply.body().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(reply.status(), out.length == 0 ? -1 : out.length);
    if (out.length > 0) {
      exchange.getResponseBody().write(out);
    }
    exchange.close();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
