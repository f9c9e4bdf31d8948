package dev.idem.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A one-thread HTTP/1.1 responder on 127.0.0.1 that writes scripted raw responses byte for byte, for headers the JDK
 * server would rewrite (it sets its own {@code Date}). One response per connection, then it closes the connection.
 */
final class RawServer implements AutoCloseable {
  final List<String> requestHeads = new CopyOnWriteArrayList<>();
  private final ServerSocket socket;
  private final Thread thread;

  RawServer(String... responses) throws IOException {
    socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    thread = new Thread(() -> serve(List.of(responses)), "raw-server");
    thread.setDaemon(true);
    thread.start();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + socket.getLocalPort() + path);
  }

  private void serve(List<String> responses) {
    int next = 0;
    while (!socket.isClosed()) {
      try (Socket s = socket.accept()) {
        String head = readHead(s.getInputStream());
        requestHeads.add(head);
        String response = responses.get(Math.min(next++, responses.size() - 1));
        s.getOutputStream().write(response.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
      } catch (IOException e) {
        return;
      }
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.write(b);
      matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
    }
    String text = head.toString(StandardCharsets.ISO_8859_1);
    for (String line : text.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        in.readNBytes(Integer.parseInt(line.substring(15).trim()));
      }
    }
    return text;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
