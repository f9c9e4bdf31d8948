package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Rules of the build that no compiler checks: every jar module names itself for the module path
 * ({@code Automatic-Module-Name}, from its {@code idem.module.name} property), with the package its code lives in;
 * and Javadoc leaves the {@code internal} packages out.
 */
class BuildRulesTest {
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Pattern NAME = Pattern.compile("<idem\\.module\\.name>([^<]+)</idem\\.module\\.name>");

  private final Path root = DocsStandAloneTest.repositoryRoot();

  @Test
  void everyJarModuleNamesItselfAfterItsOwnPackage() throws IOException {
    List<String> problems = new ArrayList<>();
    Matcher modules = MODULE.matcher(Files.readString(root.resolve("pom.xml")));
    int checked = 0;
    while (modules.find()) {
      Path dir = root.resolve(modules.group(1));
      String pom = Files.readString(dir.resolve("pom.xml"));
      if (pom.contains("<packaging>pom</packaging>")) {
        continue;
      }
      checked++;
      Matcher name = NAME.matcher(pom);
      if (!name.find()) {
        problems.add(modules.group(1) + ": no <idem.module.name> property");
        continue;
      }
      Path packageDir = dir.resolve("src/main/java").resolve(name.group(1).replace('.', '/'));
      if (!Files.isDirectory(packageDir)) {
        problems.add(modules.group(1) + ": module name " + name.group(1) + " is not a package of its code");
      }
    }

    assertThat(checked).isGreaterThan(10);
    assertThat(problems).isEmpty();
  }

  @Test
  void javadocLeavesTheInternalPackagesOut() throws IOException {
    String pom = Files.readString(root.resolve("pom.xml"));
    Matcher javadoc = Pattern.compile("<artifactId>maven-javadoc-plugin</artifactId>.*?</plugin>", Pattern.DOTALL)
        .matcher(pom);

    assertThat(javadoc.find()).as("the parent pom configures maven-javadoc-plugin").isTrue();
    assertThat(javadoc.group()).contains("<excludePackageNames>*.internal:*.internal.*</excludePackageNames>");
  }
}
