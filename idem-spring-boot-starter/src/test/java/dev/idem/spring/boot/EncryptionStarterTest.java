package dev.idem.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Idem;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.spi.KeyProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * {@code idem.encryption.*}: off by default; on, the {@code Idem} seals its answers under a keyring from the
 * properties (text or file, the text first), or under the application's own {@link KeyProvider} bean; settings that
 * cannot work stop the application at startup with a message that names the property and never a key.
 */
class EncryptionStarterTest {
  private static final Keyring KEYS = Keyring.generate("env-key");

  @TempDir
  Path dir;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class PlainApp {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class KmsApp {
    @Bean
    KeyProvider kms() {
      return Keyring.generate("kms-key");
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class TwoEncryptionsApp {
    @Bean
    Encryption one() {
      return Encryption.with(Keyring.generate("one"));
    }

    @Bean
    Encryption two() {
      return Encryption.with(Keyring.generate("two"));
    }
  }

  private static ConfigurableApplicationContext run(Class<?> app, String... more) {
    List<String> args = new ArrayList<>(List.of("--spring.datasource.url=jdbc:h2:mem:enc-" + UUID.randomUUID()
        + ";DB_CLOSE_DELAY=-1", "--idem.store.initialize-schema=true", "--idem.outbox.initialize-schema=true",
        "--idem.inbox.initialize-schema=true"));
    args.addAll(List.of(more));
    return new SpringApplicationBuilder(app).web(WebApplicationType.NONE).run(args.toArray(String[]::new));
  }

  @Test
  void offByDefault() {
    try (ConfigurableApplicationContext context = run(PlainApp.class)) {
      assertThat(context.getBeansOfType(Encryption.class)).isEmpty();
      assertThat(context.getBean(Idem.class).store()).isNotInstanceOf(EncryptedIdempotencyStore.class);
    }
  }

  @Test
  void aKeyringFileIsCreatedOnceAndSealsTheAnswers() throws Exception {
    Path file = dir.resolve("data/keyring");
    String[] args = {"--idem.encryption.enabled=true", "--idem.encryption.keyring-file=" + file,
        "--idem.encryption.create-keyring-file=true", "--idem.encryption.new-key-id=first"};
    try (ConfigurableApplicationContext context = run(PlainApp.class, args)) {
      assertThat(context.getBean(Idem.class).store()).isInstanceOf(EncryptedIdempotencyStore.class);
      assertThat(context.getBean(Encryption.class).currentKeyId()).isEqualTo("first");
    }
    String written = Files.readString(file);
    try (ConfigurableApplicationContext context = run(PlainApp.class, args)) {
      assertThat(context.getBean(Encryption.class).currentKeyId()).isEqualTo("first");
    }
    assertThat(Files.readString(file)).isEqualTo(written);
  }

  @Test
  void theKeyringTextComesBeforeTheFile() throws Exception {
    Path file = dir.resolve("keyring");
    Keyring.generate("file-key").write(file);
    try (ConfigurableApplicationContext context = run(PlainApp.class, "--idem.encryption.enabled=true",
        "--idem.encryption.keyring=" + text(KEYS), "--idem.encryption.keyring-file=" + file)) {
      assertThat(context.getBean(Encryption.class).currentKeyId()).isEqualTo("env-key");
    }
  }

  @Test
  void fieldHashesAreSealedUnlessARollingUpgradeTurnsItOff() throws Exception {
    for (boolean seal : new boolean[] {true, false}) {
      List<String> args = new ArrayList<>(List.of("--idem.encryption.enabled=true",
          "--idem.encryption.keyring=" + text(KEYS)));
      if (!seal) {
        args.add("--idem.encryption.seal-field-hashes=false");
      }
      try (ConfigurableApplicationContext context = run(PlainApp.class, args.toArray(String[]::new))) {
        assertThat(context.getBean(Idem.class).store()).isInstanceOfSatisfying(EncryptedIdempotencyStore.class,
            store -> assertThat(store.sealsFieldHashes()).isEqualTo(seal));
      }
    }
  }

  @Test
  void aKeyProviderBeanIsUsedWithoutAKeyring() {
    try (ConfigurableApplicationContext context = run(KmsApp.class, "--idem.encryption.enabled=true")) {
      assertThat(context.getBean(Encryption.class).currentKeyId()).isEqualTo("kms-key");
      assertThat(context.getBean(Idem.class).store()).isInstanceOf(EncryptedIdempotencyStore.class);
    }
  }

  @Test
  void twoEncryptionBeansStopTheStartRatherThanKeepAnswersInPlaintext() {
    assertThatThrownBy(() -> run(TwoEncryptionsApp.class)).hasStackTraceContaining("Encryption")
        .hasStackTraceContaining("one").hasStackTraceContaining("two");
  }

  @Test
  void settingsThatCannotWorkStopTheStartWithoutShowingAKey() throws Exception {
    assertThatThrownBy(() -> run(PlainApp.class, "--idem.encryption.enabled=true"))
        .hasStackTraceContaining("idem.encryption.keyring");
    assertThatThrownBy(() -> run(PlainApp.class, "--idem.encryption.enabled=true",
        "--idem.encryption.keyring=k1:c2hvcnQ=")).hasStackTraceContaining("32 bytes")
        .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("c2hvcnQ="));
    assertThatThrownBy(() -> run(PlainApp.class, "--idem.encryption.enabled=true",
        "--idem.encryption.keyring=" + text(KEYS), "--idem.encryption.data-key-uses=0"))
        .hasStackTraceContaining("idem.encryption.data-key-uses");
    assertThatThrownBy(() -> run(PlainApp.class, "--idem.encryption.enabled=true",
        "--idem.encryption.keyring-file=" + dir.resolve("missing"))).hasStackTraceContaining("missing");
  }

  private String text(Keyring keyring) throws Exception {
    Path file = dir.resolve("text-" + UUID.randomUUID());
    keyring.write(file);
    return String.join(",", Files.readAllLines(file).stream().filter(l -> !l.startsWith("#")).toList());
  }

  private static String stackTrace(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      all.append(t).append('\n');
    }
    return all.toString();
  }
}
