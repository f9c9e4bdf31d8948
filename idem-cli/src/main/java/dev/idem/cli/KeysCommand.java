package dev.idem.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.ConfigurationException;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.crypto.RecordReencryption;
import dev.idem.core.spi.IdemListener;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code idem keys}: the keyring that seals kept answers at rest. {@code add} puts a fresh key in front of a keyring
 * file (new answers are sealed under it from the next start), {@code reseal} re-seals, under the current key, the
 * answers of a record table still sealed under older keys (in bounded batches, each record in its own short
 * transaction, while the service keeps serving), and {@code retire} removes a key nobody needs any more.
 */
final class KeysCommand implements Command {
  private static final String USAGE = String.join("\n",
      "usage: idem keys add    --keyring FILE [--id ID]",
      "       idem keys reseal --keyring FILE [--db JDBC_URL] [--table NAME] [--batch N] [--seal-plaintext]",
      "       idem keys retire --keyring FILE --id ID",
      "",
      "The keyring that seals kept answers at rest (the reference service's is data/keyring). To rotate:",
      "  1. idem keys add --keyring data/keyring      a fresh key in front; restart every instance with the file",
      "  2. idem keys reseal --keyring data/keyring   re-seal what older keys still seal, while the service runs",
      "  3. idem keys retire --keyring data/keyring --id OLD   once reseal reports nothing left under OLD",
      "",
      "options:",
      "  --keyring FILE     the keyring file (newest key first); for reseal, IDEM_ENCRYPTION_KEYRING may give the",
      "                     keys instead",
      "  --id ID            add: the new key's id (default k1 for a new keyring, else k<UTC time>); retire: the key",
      "                     to remove (not the current one)",
      "  --db JDBC_URL      reseal: the database (default IDEM_DB_URL, else the service's H2 file data/payments);",
      "                     prefer IDEM_DB_URL for a URL with a password: the command line is visible to every user",
      "  --table NAME       reseal: the record table (default idem_record)",
      "  --batch N          reseal: records read per batch, 1..10000 (default 500)",
      "  --seal-plaintext   reseal: also seal answers kept before encryption was turned on",
      "  -h, --help         print this help",
      "",
      "exit status: 0 done (for reseal: nothing left under an older key); 1 a failure (a keyring or database",
      "that cannot be read, records that cannot be opened, or changed meanwhile or in progress: run it again);",
      "2 bad options.",
      "");
  static final String DEFAULT_DB = "jdbc:h2:file:./data/payments;AUTO_SERVER=FALSE";

  @Override
  public String name() {
    return "keys";
  }

  @Override
  public String summary() {
    return "rotate the keyring that seals kept answers: add a key, re-seal old records, retire a key";
  }

  @Override
  public String usage() {
    return USAGE;
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    if (args.isEmpty() || args.contains("-h") || args.contains("--help")) {
      (args.isEmpty() ? err : out).print(USAGE);
      return args.isEmpty() ? Main.USAGE : Main.OK;
    }
    Map<String, String> options = new HashMap<>();
    boolean sealPlaintext = false;
    for (int i = 1; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("--seal-plaintext")) {
        sealPlaintext = true;
      } else if (List.of("--keyring", "--id", "--db", "--table", "--batch").contains(arg) && i + 1 < args.size()) {
        options.put(arg, args.get(++i));
      } else {
        return usageError(err, "unknown option or missing value: " + arg);
      }
    }
    try {
      switch (args.get(0)) {
        case "add":
          return add(options, out, err);
        case "retire":
          return retire(options, out, err);
        case "reseal":
          return reseal(options, sealPlaintext, out, err);
        default:
          return usageError(err, "unknown action '" + args.get(0) + "': add, reseal or retire");
      }
    } catch (ConfigurationException | IllegalArgumentException e) {
      err.println("idem keys: " + Main.redact(String.valueOf(e.getMessage())));
      return Main.FAILED;
    } catch (RuntimeException e) {
      err.println("idem keys: " + Main.redact(e.toString()));
      return Main.FAILED;
    }
  }

  private static int add(Map<String, String> options, PrintStream out, PrintStream err) {
    Path file = keyringFile(options);
    if (file == null) {
      return usageError(err, "add needs --keyring FILE");
    }
    Keyring keyring = Files.exists(file) ? Keyring.load(file) : null;
    // by default a time-stamped id: a retired id must never come back, or its old records would pass for current
    String id = options.getOrDefault("--id", keyring == null ? "k1"
        : "k" + DateTimeFormatter.ofPattern("yyyyMMddHHmmss").withZone(ZoneOffset.UTC).format(Instant.now()));
    Keyring next = keyring == null ? Keyring.generate(id) : keyring.withNewKey(id);
    next.write(file);
    out.println("keyring " + file + ": " + next.keyIds() + ", new answers are sealed under '" + id + "' once every"
        + " instance has restarted with it");
    return Main.OK;
  }

  private static int retire(Map<String, String> options, PrintStream out, PrintStream err) {
    Path file = keyringFile(options);
    if (file == null || !options.containsKey("--id")) {
      return usageError(err, "retire needs --keyring FILE and --id ID");
    }
    Keyring next = Keyring.load(file).without(options.get("--id"));
    next.write(file);
    out.println("keyring " + file + ": " + next.keyIds() + "; answers still sealed under '" + options.get("--id")
        + "' can no longer be replayed");
    return Main.OK;
  }

  private static int reseal(Map<String, String> options, boolean sealPlaintext, PrintStream out, PrintStream err) {
    Path file = keyringFile(options);
    String text = System.getenv("IDEM_ENCRYPTION_KEYRING");
    if (file == null && (text == null || text.isBlank())) {
      return usageError(err, "reseal needs --keyring FILE (or IDEM_ENCRYPTION_KEYRING)");
    }
    Keyring keyring = file != null ? Keyring.load(file) : Keyring.parse(text);
    int batch;
    try {
      batch = Integer.parseInt(options.getOrDefault("--batch", "500"));
    } catch (NumberFormatException e) {
      return usageError(err, "--batch must be a number, got '" + options.get("--batch") + "'");
    }
    if (batch < 1 || batch > 10_000) {
      return usageError(err, "--batch must be 1..10000, got " + batch);
    }
    String db = options.getOrDefault("--db", System.getenv().getOrDefault("IDEM_DB_URL", DEFAULT_DB));
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(db);
    config.setMaximumPoolSize(2);
    config.setPoolName("idem-keys");
    try (HikariDataSource dataSource = new HikariDataSource(config)) {
      JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).name("keys")
          .table(options.getOrDefault("--table", "idem_record")).build();
      EncryptedIdempotencyStore sealed = EncryptedIdempotencyStore.wrap(store, Encryption.with(keyring),
          IdemListener.NOOP);
      RecordReencryption.Pass all = RecordReencryption.of(sealed, Clock.systemUTC()).sealPlaintext(sealPlaintext)
          .toTheEnd(batch);
      int changed = all.changed();
      int unreadable = all.unreadable();
      int inProgress = all.inProgress();
      out.printf("reseal under '%s': %d records read, %d re-sealed, %d sealed for the first time, %d changed"
          + " meanwhile, %d unreadable, %d in progress under an older key%n", keyring.currentKeyId(), all.scanned(),
          all.resealed(), all.sealed(), changed, unreadable, inProgress);
      if (unreadable > 0) {
        err.println("idem keys: " + unreadable + " records could not be opened with this keyring (a key missing from"
            + " it, or tampered records); they were left as they are");
      }
      if (changed + inProgress > 0) {
        err.println("idem keys: " + (changed + inProgress) + " records were being written meanwhile or are still in"
            + " progress under an older key: run reseal again once they have finished, before retiring a key");
      }
      return unreadable + changed + inProgress == 0 ? Main.OK : Main.FAILED;
    }
  }

  private static Path keyringFile(Map<String, String> options) {
    return options.containsKey("--keyring") ? Path.of(options.get("--keyring")) : null;
  }

  private static int usageError(PrintStream err, String problem) {
    err.println("idem keys: " + problem);
    err.print(USAGE);
    return Main.USAGE;
  }
}
