package dev.idem.cli;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.fingerprint.FingerprintPolicy;
import dev.idem.core.fingerprint.MalformedJsonException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code idem fingerprint}: reads JSON documents from standard input, one per line, and writes one line per
 * document: its fingerprint (hex SHA-256, as {@link Fingerprinter#fingerprintJson} computes it) or, with
 * {@code --canonical}, its canonical JSON after includes and excludes. Output is streamed: each line is written as
 * soon as its document is read, and is flushed before the command waits for more input. The first malformed line
 * (a blank line included) stops the command with a message naming its line and column on standard error and exit
 * status 1; the lines before it have been written.
 */
final class FingerprintCommand implements Command {
  private static final String USAGE = String.join("\n",
      "usage: idem fingerprint [--canonical] [--include /a,/b] [--exclude /c] [--operation NAME]",
      "",
      "Reads JSON documents from standard input, one per line, and prints one line for each:",
      "its fingerprint (64 hex characters), or with --canonical its canonical JSON (RFC 8785).",
      "",
      "options:",
      "  --canonical         print the canonical JSON (after --include/--exclude) instead of the fingerprint",
      "  --include POINTERS  fingerprint only these JSON Pointers (RFC 6901), comma-separated; repeatable",
      "  --exclude POINTERS  leave out these JSON Pointers, comma-separated; repeatable",
      "  --operation NAME    the operation hashed with each document (default: the empty string),",
      "                      for example 'POST /payments', to reproduce the fingerprints a service stores",
      "  -h, --help          print this help",
      "",
      "exit status: 0 all documents read; 1 a line is not valid JSON (earlier lines have been printed);",
      "2 bad options.",
      "");

  @Override
  public String name() {
    return "fingerprint";
  }

  @Override
  public String summary() {
    return "fingerprint JSON documents read from stdin, one per line (or print their canonical form)";
  }

  @Override
  public String usage() {
    return USAGE;
  }

  @Override
  public int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    boolean canonical = false;
    String operation = "";
    List<String> includes = new ArrayList<>();
    List<String> excludes = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      String option = arg;
      String value = null;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        option = arg.substring(0, eq);
        value = arg.substring(eq + 1);
      }
      switch (option) {
        case "-h":
        case "--help":
          out.print(USAGE);
          return Main.OK;
        case "--canonical":
          if (value != null) {
            return usageError(err, "--canonical takes no value");
          }
          canonical = true;
          break;
        case "--include":
        case "--exclude":
        case "--operation":
          if (value == null) {
            if (i + 1 >= args.size()) {
              return usageError(err, option + " needs a value");
            }
            value = args.get(++i);
          }
          if (option.equals("--operation")) {
            operation = value;
          } else {
            (option.equals("--include") ? includes : excludes).addAll(Arrays.asList(value.split(",", -1)));
          }
          break;
        default:
          return usageError(err, arg.startsWith("-") ? "unknown option '" + arg + "'" : "unexpected argument '" + arg + "'");
      }
    }
    if (operation.indexOf('\n') >= 0) {
      return usageError(err, "--operation must not contain a line feed");
    }
    Fingerprinter fingerprinter;
    try {
      fingerprinter = Fingerprinter.of(FingerprintPolicy.builder()
          .include(includes.toArray(String[]::new))
          .exclude(excludes.toArray(String[]::new))
          .build());
    } catch (IllegalArgumentException e) {
      return usageError(err, e.getMessage().replaceFirst("^include pointer", "--include pointer")
          .replaceFirst("^exclude pointer", "--exclude pointer"));
    }
    return process(fingerprinter, canonical, operation, in, out, err);
  }

  private static int usageError(PrintStream err, String problem) {
    err.println("idem fingerprint: " + problem);
    err.print(USAGE);
    return Main.USAGE;
  }

  private static int process(Fingerprinter fingerprinter, boolean canonical, String operation, InputStream in,
      PrintStream out, PrintStream err) {
    OutputStream sink = new BufferedOutputStream(out, 1 << 16);
    LineReader lines = new LineReader(in, sink);
    long lineNumber = 0;
    try {
      byte[] line;
      while ((line = lines.next()) != null) {
        lineNumber++;
        try {
          if (canonical) {
            sink.write(fingerprinter.canonicalJson(line));
          } else {
            sink.write(fingerprinter.fingerprintJson(operation, line).hash().getBytes(StandardCharsets.US_ASCII));
          }
          sink.write('\n');
        } catch (MalformedJsonException e) {
          sink.flush();
          err.println("idem fingerprint: stdin line " + lineNumber + ", column " + e.column() + ": " + e.reason());
          return Main.FAILED;
        }
      }
      sink.flush();
      return Main.OK;
    } catch (IOException e) {
      err.println("idem fingerprint: " + (lines.failedReading ? "cannot read stdin" : "cannot write stdout") + ": " + e.getMessage());
      return Main.FAILED;
    }
  }

  /** Splits a byte stream at line feeds, flushing {@code output} whenever it is about to wait for more input. */
  static final class LineReader {
    private final InputStream in;
    private final OutputStream output;
    private byte[] buffer = new byte[1 << 16];
    private int start;
    private int limit;
    private boolean eof;
    boolean failedReading;

    LineReader(InputStream in, OutputStream output) {
      this.in = in;
      this.output = output;
    }

    /** The next line without its line feed, or null at the end; a last line without a line feed counts. */
    byte[] next() throws IOException {
      int scanned = start;
      while (true) {
        for (int i = scanned; i < limit; i++) {
          if (buffer[i] == '\n') {
            byte[] line = Arrays.copyOfRange(buffer, start, i);
            start = i + 1;
            return line;
          }
        }
        if (eof) {
          if (start == limit) {
            return null;
          }
          byte[] line = Arrays.copyOfRange(buffer, start, limit);
          start = limit;
          return line;
        }
        scanned = limit - start;
        fill();
        scanned += start;
      }
    }

    private void fill() throws IOException {
      if (start > 0) {
        System.arraycopy(buffer, start, buffer, 0, limit - start);
        limit -= start;
        start = 0;
      }
      if (limit == buffer.length) {
        buffer = Arrays.copyOf(buffer, buffer.length * 2);
      }
      output.flush();
      int n;
      try {
        n = in.read(buffer, limit, buffer.length - limit);
      } catch (IOException e) {
        failedReading = true;
        throw e;
      }
      if (n < 0) {
        eof = true;
      } else {
        limit += n;
      }
    }
  }
}
