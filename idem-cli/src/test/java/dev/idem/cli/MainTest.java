package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class MainTest {

  /** The outcome of one in-process run. */
  record Run(int status, String out, String err) {}

  static Run run(String stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static String sha256(String s) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void printsOneFingerprintPerLineWithTheEmptyOperation() throws Exception {
    Run run = run("{\"b\": 1, \"a\": [1.0, 2]}\n[ \"x\" ]\n", "fingerprint");

    assertThat(run.status()).isZero();
    assertThat(run.out()).isEqualTo(sha256("\nJ{\"a\":[1,2],\"b\":1}") + "\n" + sha256("\nJ[\"x\"]") + "\n");
    assertThat(run.err()).isEmpty();
  }

  @Test
  void hashesTheGivenOperation() throws Exception {
    Run spaced = run("{\"a\":1}", "fingerprint", "--operation", "POST /payments");
    Run joined = run("{\"a\":1}", "fingerprint", "--operation=POST /payments");

    assertThat(spaced.out()).isEqualTo(sha256("POST /payments\nJ{\"a\":1}") + "\n");
    assertThat(joined.out()).isEqualTo(spaced.out());
  }

  @Test
  void printsCanonicalJsonAfterIncludesAndExcludes() {
    String doc = "{\"order\": {\"id\": 7, \"ts\": 1e3, \"lines\": [1, 2]}, \"nonce\": \"n\", \"x\": 1}\n";

    Run plain = run(doc, "fingerprint", "--canonical");
    Run projected = run(doc, "fingerprint", "--canonical", "--include", "/order,/x", "--exclude=/order/ts",
        "--exclude", "/order/lines/0");

    assertThat(plain.out()).isEqualTo("{\"nonce\":\"n\",\"order\":{\"id\":7,\"lines\":[1,2],\"ts\":1000},\"x\":1}\n");
    assertThat(projected.status()).isZero();
    assertThat(projected.out()).isEqualTo("{\"order\":{\"id\":7,\"lines\":[2]},\"x\":1}\n");
  }

  @Test
  void fingerprintFollowsIncludes() throws Exception {
    Run run = run("{\"amount\": 5, \"memo\": \"a\"}\n{\"memo\": \"b\", \"amount\": 5.0}\n", "fingerprint", "--include", "/amount");

    assertThat(run.out()).isEqualTo((sha256("\nJ{\"amount\":5}") + "\n").repeat(2));
  }

  @Test
  void stopsAtTheFirstMalformedLineAfterPrintingEarlierOnes() throws Exception {
    Run run = run("{\"a\":1}\n{\"a\": 1,}\n{\"b\":2}\n", "fingerprint");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).isEqualTo(sha256("\nJ{\"a\":1}") + "\n");
    assertThat(run.err()).isEqualTo("idem fingerprint: stdin line 2, column 9: unexpected character '}': "
        + "expected a member name (a string) after ','\n");
  }

  @Test
  void treatsABlankLineAsMalformed() {
    Run run = run("[1]\n\n[2]\n", "fingerprint", "--canonical");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).isEqualTo("[1]\n");
    assertThat(run.err()).isEqualTo("idem fingerprint: stdin line 2, column 1: empty document: expected a JSON value\n");
  }

  @Test
  void readsALastLineWithoutLineFeedAndCrLfLines() {
    Run run = run("[1.0]\r\n[2.0]", "fingerprint", "--canonical");

    assertThat(run.status()).isZero();
    assertThat(run.out()).isEqualTo("[1]\n[2]\n");
  }

  @Test
  void emptyInputPrintsNothing() {
    Run run = run("", "fingerprint");

    assertThat(run.status()).isZero();
    assertThat(run.out()).isEmpty();
  }

  @Test
  void readsLinesLongerThanItsBuffer() {
    String big = "[" + "\"abcdefghij\",".repeat(20_000) + "1]";

    Run run = run(big + "\n" + big + "\n", "fingerprint", "--canonical");

    assertThat(run.out()).isEqualTo(big + "\n" + big + "\n");
  }

  @Test
  void rejectsUnknownOptionsWithUsage() {
    Run run = run("", "fingerprint", "--frobnicate");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).startsWith("idem fingerprint: unknown option '--frobnicate'\nusage: idem fingerprint");
  }

  @Test
  void rejectsMissingValuesAndBadPointers() {
    Run missing = run("", "fingerprint", "--include");
    Run badPointer = run("", "fingerprint", "--include", "/ok,amount");
    Run stray = run("", "fingerprint", "file.json");
    Run canonicalValue = run("", "fingerprint", "--canonical=yes");

    assertThat(missing.status()).isEqualTo(2);
    assertThat(missing.err()).startsWith("idem fingerprint: --include needs a value\n");
    assertThat(badPointer.status()).isEqualTo(2);
    assertThat(badPointer.err()).startsWith("idem fingerprint: --include pointer 'amount' is not a JSON Pointer");
    assertThat(stray.status()).isEqualTo(2);
    assertThat(stray.err()).startsWith("idem fingerprint: unexpected argument 'file.json'");
    assertThat(canonicalValue.status()).isEqualTo(2);
  }

  @Test
  void printsHelp() {
    Run top = run("", "--help");
    Run command = run("", "fingerprint", "--help");

    assertThat(top.status()).isZero();
    assertThat(top.out()).contains("usage: idem <command> [options]").contains("fingerprint");
    assertThat(command.status()).isZero();
    assertThat(command.out()).startsWith("usage: idem fingerprint [--canonical]");
  }

  @Test
  void unknownOrMissingCommandPrintsUsageAndExits2() {
    Run unknown = run("", "launch");
    Run none = run("");

    assertThat(unknown.status()).isEqualTo(2);
    assertThat(unknown.err()).startsWith("idem: unknown command 'launch'\nusage: idem <command> [options]");
    assertThat(unknown.out()).isEmpty();
    assertThat(none.status()).isEqualTo(2);
    assertThat(none.err()).startsWith("usage: idem <command> [options]");
  }
}
