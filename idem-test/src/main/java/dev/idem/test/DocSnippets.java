package dev.idem.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps a guide's Java examples compiled: a test holds each example as a named region of its own source, between
 * {@code // <guide>:begin <name>} and {@code // <guide>:end <name>} comment lines, compiles and runs it; {@link
 * #regions} reads the regions back (their common indentation removed) and {@link #javaBlocks} the guide's
 * {@code ```java} blocks, so the test can check that the guide shows exactly that code.
 *
 * <pre>{@code
 * Map<String, String> regions = DocSnippets.regions(Path.of("src/test/java/.../GuideTest.java"), "docs/guide.md");
 * assertThat(DocSnippets.javaBlocks(Path.of("../docs/guide.md"))).containsExactlyElementsOf(regions.values());
 * }</pre>
 */
public final class DocSnippets {
  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

  private DocSnippets() {}

  /**
   * The regions of {@code source} marked for {@code guide}, by name in the order they come.
   *
   * @param guide the marker's prefix, such as {@code docs/console.md}
   * @throws IllegalStateException when a region is not closed, or ends under another name
   */
  public static Map<String, String> regions(Path source, String guide) {
    Map<String, String> regions = new LinkedHashMap<>();
    String begin = "// " + guide + ":begin ";
    String end = "// " + guide + ":end ";
    String name = null;
    List<String> body = new ArrayList<>();
    for (String line : read(source).split("\n", -1)) {
      String s = line.strip();
      if (s.startsWith(begin)) {
        name = s.substring(begin.length());
        body.clear();
      } else if (s.startsWith(end)) {
        String closing = s.substring(end.length());
        if (!closing.equals(name)) {
          throw new IllegalStateException(source + ": region '" + closing + "' ends, but '" + name + "' is open");
        }
        int indent = body.stream().filter(l -> !l.isBlank())
            .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        regions.put(name, String.join("\n", body.stream()
            .map(l -> l.isBlank() ? "" : l.substring(indent)).toList()).stripTrailing());
        name = null;
      } else if (name != null) {
        body.add(line);
      }
    }
    if (name != null) {
      throw new IllegalStateException(source + ": region '" + name + "' is never closed");
    }
    return regions;
  }

  /** The {@code ```java} blocks of a Markdown page, trailing blank space removed, in page order. */
  public static List<String> javaBlocks(Path page) {
    Matcher blocks = JAVA_BLOCK.matcher(read(page));
    List<String> shown = new ArrayList<>();
    while (blocks.find()) {
      shown.add(blocks.group(1).stripTrailing());
    }
    return shown;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8).replace("\r\n", "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file.toAbsolutePath(), e);
    }
  }
}
