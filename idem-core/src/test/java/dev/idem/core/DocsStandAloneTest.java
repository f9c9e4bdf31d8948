package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The repository stands alone: no file cites a document that is not in it, and every relative link in the README and
 * under docs/ leads to a file that exists (and, for a link to a heading, to a heading that exists).
 */
class DocsStandAloneTest {
  /** Built from parts, so that this file does not contain what it looks for. */
  private static final String BLUEPRINT = "DES" + "IGN";
  private static final List<String> FORBIDDEN =
      List.of(BLUEPRINT + " section", BLUEPRINT + " \u00a7", BLUEPRINT + ".md");
  private static final List<String> TEXT_SUFFIXES =
      List.of(".java", ".md", ".xml", ".properties", ".yml", ".yaml", ".txt");
  private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

  private final Path root = repositoryRoot();

  @Test
  void noTrackedFileCitesAnOutsideDocument() throws Exception {
    List<String> offending = new ArrayList<>();
    List<Path> files = textFiles();
    for (Path file : files) {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (int i = 0; i < lines.size(); i++) {
        for (String forbidden : FORBIDDEN) {
          if (lines.get(i).contains(forbidden)) {
            offending.add(root.relativize(file) + ":" + (i + 1) + ": " + lines.get(i).strip());
          }
        }
      }
    }

    assertThat(files).hasSizeGreaterThan(100);
    assertThat(offending).as("lines that cite a document the repository does not hold").isEmpty();
  }

  @Test
  void relativeLinksInTheReadmeAndDocsLeadSomewhere() throws Exception {
    List<Path> documents = new ArrayList<>();
    documents.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    List<String> broken = new ArrayList<>();
    int links = 0;
    for (Path document : documents) {
      String text = withoutCode(Files.readString(document, StandardCharsets.UTF_8));
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue;
        }
        links++;
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? document : document.getParent().resolve(path).normalize();
        String where = root.relativize(document) + ": " + target;
        if (!Files.exists(resolved)) {
          broken.add(where + " (no such file)");
        } else if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
          broken.add(where + " (no such heading)");
        }
      }
    }

    assertThat(links).isGreaterThan(20);
    assertThat(broken).as("relative links that lead nowhere").isEmpty();
  }

  /** The anchors GitHub gives a Markdown file's headings. */
  static Set<String> anchors(Path markdown) throws IOException {
    Set<String> anchors = new HashSet<>();
    for (String line : withoutCode(Files.readString(markdown, StandardCharsets.UTF_8)).split("\n")) {
      if (line.matches("^#{1,6} .*")) {
        String title = line.replaceFirst("^#+ ", "").strip().toLowerCase(Locale.ROOT);
        String slug = title.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
        String unique = slug;
        for (int n = 1; !anchors.add(unique); n++) {
          unique = slug + "-" + n;
        }
      }
    }
    return anchors;
  }

  /** The text without fenced code blocks and inline code spans. */
  static String withoutCode(String markdown) {
    StringBuilder out = new StringBuilder(markdown.length());
    boolean fenced = false;
    for (String line : markdown.split("\n", -1)) {
      if (line.strip().startsWith("```")) {
        fenced = !fenced;
        out.append('\n');
        continue;
      }
      out.append(fenced ? "" : line.replaceAll("`[^`]*`", "``")).append('\n');
    }
    return out.toString();
  }

  /** Tracked (and new, not ignored) text files, from git; every file outside build output without git. */
  private List<Path> textFiles() throws Exception {
    List<String> names = new ArrayList<>();
    if (Files.exists(root.resolve(".git"))) {
      Process git = new ProcessBuilder("git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")
          .directory(root.toFile()).redirectErrorStream(false).start();
      byte[] out;
      try (InputStream in = git.getInputStream()) {
        out = in.readAllBytes();
      }
      assertThat(git.waitFor()).as("git ls-files").isZero();
      for (String name : new String(out, StandardCharsets.UTF_8).split("\0")) {
        if (!name.isEmpty()) {
          names.add(name);
        }
      }
    } else {
      try (Stream<Path> all = Files.walk(root)) {
        all.filter(Files::isRegularFile).map(p -> root.relativize(p).toString().replace('\\', '/'))
            .filter(n -> !n.contains("/target/") && !n.startsWith("target/") && !n.startsWith(".")
                && !n.contains("/node_modules/") && !n.contains("/."))
            .forEach(names::add);
      }
    }
    List<Path> files = new ArrayList<>();
    for (String name : names) {
      if (TEXT_SUFFIXES.stream().anyMatch(name::endsWith) && Files.isRegularFile(root.resolve(name))) {
        files.add(root.resolve(name));
      }
    }
    return files;
  }

  /** The directory of the root pom: the nearest one up from here that lists idem-core as a module. */
  static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path pom = dir.resolve("pom.xml");
      try {
        if (Files.isRegularFile(pom) && Files.readString(pom).contains("<module>idem-core</module>")) {
          return dir;
        }
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + pom, e);
      }
    }
    throw new IllegalStateException(
        "no pom.xml listing <module>idem-core</module> above " + Path.of("").toAbsolutePath());
  }
}
