package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.spi.PendingJournal;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileJournalTest extends PendingJournalContractTest {
  @TempDir Path dir;

  @Override
  PendingJournal open() {
    return FileJournal.open(dir.resolve("contract/pending.journal"));
  }

  @Override
  PendingJournal reopen() {
    return FileJournal.open(dir.resolve("contract/pending.journal"));
  }

  @Test
  void tornLastRecordIsIgnoredAndLaterAppendsAreReadable() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (FileJournal journal = FileJournal.open(file)) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
    }
    long size = Files.size(file);
    for (long cut = 1; cut < 40; cut += 7) {
      Path copy = dir.resolve("torn-" + cut + ".journal");
      Files.copy(file, copy);
      try (RandomAccessFile raf = new RandomAccessFile(copy.toFile(), "rw")) {
        raf.setLength(size - cut);
      }

      try (FileJournal torn = FileJournal.open(copy)) {
        assertThat(torn.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k1");
        torn.append(intent("k3", "{\"a\":3}"));
      }
      try (FileJournal reopened = FileJournal.open(copy)) {
        assertThat(reopened.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k1", "k3");
      }
    }
  }

  @Test
  void corruptLastRecordFailsItsCrcAndIsIgnored() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (FileJournal journal = FileJournal.open(file)) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
    }
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 3] ^= 0x5A;
    Files.write(file, bytes);

    try (FileJournal journal = FileJournal.open(file)) {
      assertThat(journal.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k1");
    }
  }

  @Test
  void garbageLengthIsNotMisreadAsARecord() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (FileJournal journal = FileJournal.open(file)) {
      journal.append(intent("k1", "{\"a\":1}"));
    }
    Files.write(file, new byte[] {0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0, 0},
        java.nio.file.StandardOpenOption.APPEND);

    try (FileJournal journal = FileJournal.open(file)) {
      assertThat(journal.pending()).hasSize(1);
    }
  }

  @Test
  void completingEverythingCompactsTheFileToEmpty() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (FileJournal journal = FileJournal.open(file)) {
      journal.append(intent("k1", "{\"a\":1}"));
      journal.append(intent("k2", "{\"a\":2}"));
      journal.complete("k1");
      assertThat(Files.size(file)).isPositive();

      journal.complete("k2");

      assertThat(Files.size(file)).isZero();
      assertThat(journal.pending()).isEmpty();
      journal.append(intent("k4", "{\"a\":4}"));
    }
    try (FileJournal reopened = FileJournal.open(file)) {
      assertThat(reopened.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k4");
    }
    assertThat(dir.resolve("pending.journal.compact")).doesNotExist();
  }

  @Test
  void explicitCompactionKeepsOnlyPendingIntents() throws IOException {
    Path file = dir.resolve("pending.journal");
    try (FileJournal journal = FileJournal.open(file)) {
      for (int i = 0; i < 20; i++) {
        journal.append(intent("k" + i, "{\"a\":" + i + "}"));
      }
      for (int i = 0; i < 19; i++) {
        journal.complete("k" + i);
      }
      long before = Files.size(file);

      journal.compact();

      assertThat(Files.size(file)).isLessThan(before / 10);
      journal.append(intent("k99", "{}"));
    }
    try (FileJournal reopened = FileJournal.open(file)) {
      assertThat(reopened.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k19", "k99");
    }
  }

  @Test
  void oversizedRecordIsRefusedWithAClearMessage() {
    try (FileJournal journal = FileJournal.open(dir.resolve("pending.journal"), 1024)) {
      assertThatThrownBy(() -> journal.append(intent("k1", "x".repeat(2000))))
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("maxRecordBytes 1024");
      assertThat(journal.pending()).isEmpty();
    }
  }

  @Test
  void intentWithoutKeyCannotBeJournaled() {
    try (FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      Intent keyless = Intent.post(URI.create("http://127.0.0.1:1/p"), new byte[0]);

      assertThatThrownBy(() -> journal.append(keyless)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void nonAsciiHeadersAndBinaryBodiesSurvive() {
    Path file = dir.resolve("pending.journal");
    byte[] binary = new byte[256];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) i;
    }
    Intent intent = Intent.put(URI.create("https://example.test/a%20b"), binary).withKey("k-bin");
    try (FileJournal journal = FileJournal.open(file)) {
      journal.append(intent);
    }

    try (FileJournal reopened = FileJournal.open(file)) {
      assertSameIntent(reopened.pending().get(0), intent);
    }
  }

  @Test
  void sameKeyForADifferentIntentIsRefusedAndTheSameIntentAgainIsANoOp() {
    try (FileJournal journal = FileJournal.open(dir.resolve("same-key.journal"))) {
      journal.append(PendingJournalContractTest.intent("k-1", "{\"a\":1}"));

      journal.append(PendingJournalContractTest.intent("k-1", "{\"a\":1}"));
      assertThatThrownBy(() -> journal.append(PendingJournalContractTest.intent("k-1", "{\"a\":2}")))
          .isInstanceOf(JournalException.class).hasMessageContaining("already pending for a different intent");
      assertThat(journal.pending()).hasSize(1);
    }
  }

  @Test
  void recordWrittenUnderALargerLimitSurvivesReopeningWithASmallerOne() {
    Path file = dir.resolve("limits.journal");
    String big = "{\"note\":\"" + "x".repeat(3000) + "\"}";
    try (FileJournal journal = FileJournal.open(file, 8192)) {
      journal.append(PendingJournalContractTest.intent("k-big", big));
      journal.append(PendingJournalContractTest.intent("k-small", "{}"));
    }

    try (FileJournal reopened = FileJournal.open(file, 1024)) {
      assertThat(reopened.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k-big", "k-small");
    }
  }

  @Test
  void aSecondInstanceOnTheSameFileFailsToOpenUntilTheFirstCloses() {
    Path file = dir.resolve("locked/pending.journal");
    try (FileJournal first = FileJournal.open(file)) {
      first.append(intent("k1", "{}"));

      assertThatThrownBy(() -> FileJournal.open(file))
          .isInstanceOf(JournalException.class)
          .hasMessageContaining("is open in another FileJournal");
      first.append(intent("k2", "{}"));
    }
    try (FileJournal reopened = FileJournal.open(file)) {
      assertThat(reopened.pending()).extracting(i -> i.key().orElseThrow()).containsExactly("k1", "k2");
    }
  }
}
