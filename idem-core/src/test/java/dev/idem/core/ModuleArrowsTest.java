package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The arrows between modules that the poms alone do not hold, checked on the source of every module (main and test
 * code, comments left out), so that a broken arrow fails the build:
 * <ul>
 *   <li>no {@code java.sql} or {@code javax.sql} in the main code of idem-core, idem-servlet, idem-outbox or the
 *       broker modules: stores reach them through the SPIs (idem-core's, idem-outbox's); the JDBC stores are
 *       idem-jdbc's;
 *   <li>no module uses another module's {@code *.internal} packages: what crosses a module is public API;
 *   <li>no Spring outside the starter, the examples, the command line that runs the reference service, and the
 *       benchmarks whose subject is Spring (idem-bench-spring: the peers' Spring-based stores, Spring's listener
 *       containers).
 * </ul>
 * docs/architecture.md ("Module dependencies") draws the arrows.
 */
class ModuleArrowsTest {
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern NAME = Pattern.compile("<idem\\.module\\.name>([^<]+)</idem\\.module\\.name>");
  private static final Pattern INTERNAL = Pattern.compile("\\b(dev\\.idem(?:\\.[a-z]+)+?)\\.internal\\b");
  /** Spring's root package, split so that this file does not name it. */
  private static final String SPRING = "org." + "springframework";
  private static final Set<String> NO_JDBC = Set.of("idem-core", "idem-servlet", "idem-outbox", "idem-rabbitmq",
      "idem-nats", "idem-kafka");
  private static final Set<String> SPRING_ALLOWED =
      Set.of("idem-spring-boot-starter", "examples/payments", "idem-cli", "idem-bench-spring");

  private final Path root = DocsStandAloneTest.repositoryRoot();

  @Test
  void everyArrowHolds() throws IOException {
    List<String> broken = new ArrayList<>();
    int files = 0;
    Matcher modules = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
    while (modules.find()) {
      String module = modules.group(1);
      Path dir = root.resolve(module);
      Matcher name = NAME.matcher(Files.readString(dir.resolve("pom.xml")));
      if (!name.find()) {
        continue; // the BOM: no code
      }
      String own = name.group(1);
      for (Path file : javaFiles(dir)) {
        files++;
        String code = withoutComments(Files.readString(file));
        String where = root.relativize(file).toString();
        boolean jdbc = code.contains("java.sql.") || code.contains("javax.sql.");
        if (NO_JDBC.contains(module) && file.startsWith(dir.resolve("src/main")) && jdbc) {
          broken.add(where + ": java.sql in " + module);
        }
        Matcher internal = INTERNAL.matcher(code);
        while (internal.find()) {
          if (!internal.group(1).equals(own) && !internal.group(1).startsWith(own + ".")) {
            broken.add(where + ": uses " + internal.group(1) + ".internal, another module's");
          }
        }
        if (!SPRING_ALLOWED.contains(module) && !module.startsWith("examples/") && code.contains(SPRING)) {
          broken.add(where + ": Spring in " + module);
        }
      }
    }

    assertThat(files).isGreaterThan(300);
    assertThat(broken).isEmpty();
  }

  @Test
  void theCheckSeesCodeButNotComments() {
    // split so that this file's own literals do not trip the check
    String internal = "dev.idem.x." + "internal";
    String code = withoutComments("import java.sql.Connection; // " + internal + "\n"
        + "/* " + SPRING + " */ String s = \"// not a comment\"; char q = '\"';");

    assertThat(code).contains("java.sql.Connection").contains("\"// not a comment\"")
        .doesNotContain(internal).doesNotContain(SPRING);
  }

  private static List<Path> javaFiles(Path module) throws IOException {
    List<Path> out = new ArrayList<>();
    for (String tree : List.of("src/main/java", "src/test/java")) {
      Path dir = module.resolve(tree);
      if (Files.isDirectory(dir)) {
        try (Stream<Path> walk = Files.walk(dir)) {
          walk.filter(p -> p.toString().endsWith(".java")).forEach(out::add);
        }
      }
    }
    return out;
  }

  /** The source with its comments blanked out; string, text-block and character literals kept. */
  static String withoutComments(String source) {
    StringBuilder out = new StringBuilder(source.length());
    int i = 0;
    int n = source.length();
    while (i < n) {
      char c = source.charAt(i);
      if (c == '/' && i + 1 < n && source.charAt(i + 1) == '/') {
        while (i < n && source.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && source.charAt(i + 1) == '*') {
        int end = source.indexOf("*/", i + 2);
        i = end < 0 ? n : end + 2;
        out.append(' ');
      } else if (c == '"' && source.startsWith("\"\"\"", i)) {
        int end = source.indexOf("\"\"\"", i + 3);
        int stop = end < 0 ? n : end + 3;
        out.append(source, i, stop);
        i = stop;
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
          j += source.charAt(j) == '\\' ? 2 : 1;
        }
        int stop = Math.min(n, j + 1);
        out.append(source, i, stop);
        i = stop;
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }
}
