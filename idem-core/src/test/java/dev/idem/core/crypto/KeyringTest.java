package dev.idem.core.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.ConfigurationException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KeyringTest {
  private static final String KEY_A = Base64.getEncoder().encodeToString(new byte[32]);
  private static final String KEY_B = Base64.getEncoder().encodeToString("0123456789abcdef0123456789abcdef"
      .getBytes(StandardCharsets.US_ASCII));

  @TempDir
  Path dir;

  @Test
  void parsesEntriesNewestFirstFromLinesOrCommas() {
    Keyring lines = Keyring.parse("# comment\n\nk2:" + KEY_B + "\n  k1 : " + KEY_A + "  \n");
    Keyring commas = Keyring.parse("k2:" + KEY_B + ",k1:" + KEY_A);

    assertThat(lines.keyIds()).containsExactly("k2", "k1");
    assertThat(lines.currentKeyId()).isEqualTo("k2");
    assertThat(commas.keyIds()).containsExactly("k2", "k1");
  }

  @Test
  void badEntriesAreRefusedWithoutShowingAKey() {
    assertThatThrownBy(() -> Keyring.parse("")).isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("at least one key");
    assertThatThrownBy(() -> Keyring.parse("k1" + KEY_A)).isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("entry 1").hasMessageNotContaining(KEY_A);
    assertThatThrownBy(() -> Keyring.parse("k1:not*base64")).isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("not base64").hasMessageNotContaining("not*base64");
    assertThatThrownBy(() -> Keyring.parse("k1:" + Base64.getEncoder().encodeToString(new byte[16])))
        .isInstanceOf(ConfigurationException.class).hasMessageContaining("32 bytes");
    assertThatThrownBy(() -> Keyring.parse("k 1:" + KEY_A)).isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("key id");
    assertThatThrownBy(() -> Keyring.parse("k1:" + KEY_A + ",k1:" + KEY_B)).isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("twice");
  }

  @Test
  void anEntryWrittenKeyFirstIsRefusedWithoutShowingTheKey() {
    assertThatThrownBy(() -> Keyring.parse(KEY_B + ":k1")).isInstanceOf(ConfigurationException.class)
        .hasMessageNotContaining(KEY_B).hasMessageNotContaining(KEY_B.substring(0, 20));
    assertThatThrownBy(() -> Keyring.parse(KEY_B + ":" + KEY_A)).isInstanceOf(ConfigurationException.class)
        .hasMessageNotContaining(KEY_B.substring(0, 20)).hasMessageNotContaining(KEY_A.substring(0, 20));
  }

  @Test
  void toStringShowsIdsOnly() {
    Keyring keyring = Keyring.parse("k1:" + KEY_B);

    assertThat(keyring.toString()).contains("k1").doesNotContain(KEY_B);
  }

  @Test
  void loadOrCreateWritesAnOwnerOnlyFileOnceAndReadsItBack() throws Exception {
    Path file = dir.resolve("data/keyring");

    Keyring created = Keyring.loadOrCreate(file, "k1");
    Keyring again = Keyring.loadOrCreate(file, "other");

    assertThat(again.keyIds()).containsExactly("k1");
    byte[] sealed = Encryption.with(created).seal(new byte[] {1, 2, 3}, new byte[0]);
    assertThat(Encryption.with(again).open(sealed, new byte[0])).containsExactly(1, 2, 3);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
  }

  @Test
  void aNewKeyGoesInFrontAndARetiredKeyCanLeaveButNotTheCurrentOne() throws Exception {
    Path file = dir.resolve("keyring");
    Keyring k1 = Keyring.loadOrCreate(file, "k1");

    Keyring k2 = k1.withNewKey("k2");
    k2.write(file);

    assertThat(Keyring.load(file).keyIds()).containsExactly("k2", "k1");
    assertThat(k2.without("k1").keyIds()).containsExactly("k2");
    assertThatThrownBy(() -> k2.without("k2")).isInstanceOf(ConfigurationException.class);
    assertThatThrownBy(() -> k2.withNewKey("k1")).isInstanceOf(ConfigurationException.class);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
  }

  @Test
  void ofTakesKeysNewestFirst() {
    Keyring keyring = Keyring.of(Map.of("only", new byte[32]));

    assertThat(keyring.currentKeyId()).isEqualTo("only");
  }
}
