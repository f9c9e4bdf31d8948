package dev.idem.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README quotes the service's real code: every {@code java} block is a run of consecutive lines of one source
 * file under {@code src/main/java}, every {@code sql} block one of {@code schema.sql}, and every line of a
 * {@code properties} block a line of {@code application.properties} (indentation aside).
 */
class ReadmeSnippetsTest {
  private static final Path MODULE = Path.of("").toAbsolutePath();

  @Test
  void everySnippetIsTheRealCode() throws IOException {
    Map<String, List<List<String>>> blocks = blocks(Files.readString(MODULE.resolve("README.md")));
    List<List<String>> java = sources(MODULE.resolve("src/main/java"), ".java");
    List<List<String>> sql = sources(MODULE.resolve("src/main/resources"), ".sql");
    List<String> properties = lines(MODULE.resolve("src/main/resources/application.properties"));

    List<String> stale = new ArrayList<>();
    for (List<String> block : blocks.getOrDefault("java", List.of())) {
      if (java.stream().noneMatch(file -> Collections.indexOfSubList(file, block) >= 0)) {
        stale.add(String.join("\n", block));
      }
    }
    for (List<String> block : blocks.getOrDefault("sql", List.of())) {
      if (sql.stream().noneMatch(file -> Collections.indexOfSubList(file, block) >= 0)) {
        stale.add(String.join("\n", block));
      }
    }
    for (List<String> block : blocks.getOrDefault("properties", List.of())) {
      block.stream().filter(line -> !properties.contains(line)).forEach(stale::add);
    }

    assertThat(blocks.getOrDefault("java", List.of())).hasSizeGreaterThanOrEqualTo(4);
    assertThat(blocks.getOrDefault("properties", List.of())).isNotEmpty();
    assertThat(stale).as("README snippets that are not in the sources").isEmpty();
  }

  /** The fenced blocks by language, each as its stripped, non-blank lines. */
  private static Map<String, List<List<String>>> blocks(String markdown) {
    Map<String, List<List<String>>> out = new HashMap<>();
    String language = null;
    List<String> current = null;
    for (String line : markdown.split("\n", -1)) {
      String stripped = line.strip();
      if (stripped.startsWith("```")) {
        if (current == null) {
          language = stripped.substring(3).strip();
          current = new ArrayList<>();
        } else {
          out.computeIfAbsent(language, k -> new ArrayList<>()).add(current);
          current = null;
        }
      } else if (current != null && !stripped.isEmpty()) {
        current.add(stripped);
      }
    }
    return out;
  }

  private static List<List<String>> sources(Path dir, String suffix) throws IOException {
    List<List<String>> out = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path file : walk.filter(p -> p.toString().endsWith(suffix)).toList()) {
        out.add(lines(file));
      }
    }
    return out;
  }

  private static List<String> lines(Path file) throws IOException {
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream().map(String::strip).filter(s -> !s.isEmpty())
        .toList();
  }
}
