package dev.idem.jdbc.outbox.relay;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A sink that appends one line per message to a file: the record of what reached the destination survives a
 * {@code kill -9} of the process that wrote it (the kernel keeps what was written).
 */
class FileSinkTransport implements OutboxTransport {
  private final FileChannel out;

  FileSinkTransport(Path file) throws IOException {
    this.out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
  }

  @Override
  public synchronized DeliveryResult send(OutboxMessage message) throws IOException {
    out.write(ByteBuffer.wrap((message.id() + "\n").getBytes(StandardCharsets.US_ASCII)));
    afterWrite(message);
    return DeliveryResult.delivered();
  }

  void afterWrite(OutboxMessage message) {}

  @Override
  public void close() throws IOException {
    out.close();
  }

  /** Arrivals per event id in a sink file. */
  static Map<UUID, Integer> arrivals(Path file) throws IOException {
    Map<UUID, Integer> counts = new HashMap<>();
    for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
      if (!line.isBlank()) {
        counts.merge(UUID.fromString(line), 1, Integer::sum);
      }
    }
    return counts;
  }
}
