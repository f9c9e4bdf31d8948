package dev.idem.client;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.spi.PendingJournal;
import dev.idem.core.crypto.Encryption;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EncryptedFileJournalTest extends EncryptedJournalContract {
  @TempDir Path dir;

  Path file() {
    return dir.resolve("sealed/pending.journal");
  }

  @Override
  void reset() {
    try {
      Files.deleteIfExists(file());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  PendingJournal journal(Encryption encryption) {
    FileJournal.Builder b = FileJournal.builder(file());
    return encryption == null ? b.open() : b.encryption(encryption).open();
  }

  @Override
  String rawText() throws IOException {
    return new String(Files.readAllBytes(file()), ISO_8859_1);
  }

  @Override
  byte[] rawBody(String key) throws IOException {
    return records().stream().filter(r -> r.key.equals(key) && r.body != null).reduce((a, b) -> b).orElseThrow()
        .body;
  }

  @Override
  void setRawBody(String key, byte[] body) throws IOException {
    List<Rec> records = records();
    records.stream().filter(r -> r.key.equals(key) && r.body != null).forEach(r -> r.body = body);
    write(records);
  }

  @Test
  void aTamperedBodyLeavesTheFileAsItIs() throws Exception {
    reset();
    try (PendingJournal journal = journal(encryption)) {
      journal.append(payment("pay-1", 1));
      journal.append(payment("pay-2", 2));
    }
    setRawBody("pay-1", flipOneByte(rawBody("pay-1")));
    byte[] before = Files.readAllBytes(file());

    assertThatThrownBy(() -> journal(encryption)).isInstanceOf(JournalException.class)
        .hasMessageContaining(file().toString());

    assertThat(Files.readAllBytes(file())).isEqualTo(before);
  }

  @Test
  void compactionSealsPlaintextIntentsUnderTheCurrentKey() throws Exception {
    reset();
    try (PendingJournal journal = journal(null)) {
      journal.append(payment("pay-old", 1));
    }
    try (FileJournal journal = FileJournal.builder(file()).encryption(encryption).open()) {
      journal.compact();
    }

    assertThat(rawText()).doesNotContain(CARD);
    assertThat(Encryption.keyIdOf(rawBody("pay-old"))).isEqualTo("k1");
    assertSameIntent(readPending(encryption).get(0), payment("pay-old", 1));
  }

  /** One record of the file: an intent (type 1 or 3, with its fields) or a completion (type 2, key only). */
  static final class Rec {
    byte type;
    String key;
    String method;
    String uri;
    List<String> headers = new ArrayList<>();
    byte[] body;
  }

  List<Rec> records() throws IOException {
    ByteBuffer all = ByteBuffer.wrap(Files.readAllBytes(file()));
    List<Rec> out = new ArrayList<>();
    while (all.remaining() >= 8) {
      byte[] payload = new byte[all.getInt()];
      all.getInt();
      all.get(payload);
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
      Rec r = new Rec();
      r.type = in.readByte();
      r.key = string(in);
      if (r.type != 2) {
        r.method = string(in);
        r.uri = string(in);
        int headers = in.readInt();
        for (int i = 0; i < headers * 2; i++) {
          r.headers.add(string(in));
        }
        r.body = in.readNBytes(in.readInt());
      }
      out.add(r);
    }
    return out;
  }

  void write(List<Rec> records) throws IOException {
    ByteArrayOutputStream file = new ByteArrayOutputStream();
    for (Rec r : records) {
      ByteArrayOutputStream payload = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(payload);
      out.writeByte(r.type);
      bytes(out, r.key.getBytes(UTF_8));
      if (r.type != 2) {
        bytes(out, r.method.getBytes(UTF_8));
        bytes(out, r.uri.getBytes(UTF_8));
        out.writeInt(r.headers.size() / 2);
        for (String h : r.headers) {
          bytes(out, h.getBytes(UTF_8));
        }
        bytes(out, r.body);
      }
      out.flush();
      CRC32 crc = new CRC32();
      crc.update(payload.toByteArray());
      DataOutputStream framed = new DataOutputStream(file);
      framed.writeInt(payload.size());
      framed.writeInt((int) crc.getValue());
      framed.write(payload.toByteArray());
    }
    Files.write(file(), file.toByteArray());
  }

  private static String string(DataInputStream in) throws IOException {
    return new String(in.readNBytes(in.readInt()), UTF_8);
  }

  private static void bytes(DataOutputStream out, byte[] b) throws IOException {
    out.writeInt(b.length);
    out.write(b);
  }
}
