package dev.idem.servlet.conditional;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.StringJoiner;

/**
 * A request's preconditions as a condition on a resource's version column, so that the check and the write are one
 * statement and no other writer can slip in between (no read-then-write). For resources whose entity-tags are
 * {@link ETag#ofVersion}. Immutable and thread-safe; get one from {@link Preconditions#versionCondition()}.
 *
 * <pre>{@code
 * VersionCondition expected = preconditions.versionCondition();
 * if (!expected.updatable()) { ... 412 ... }
 * PreparedStatement ps = c.prepareStatement("UPDATE account SET name = ?, version = version + 1"
 *     + " WHERE tenant = ? AND id = ?" + expected.sql("version"));
 * ps.setString(1, name);
 * ps.setString(2, tenant);
 * ps.setString(3, id);
 * VersionParameters.bind(ps, 4, expected.parameters());   // dev.idem.jdbc, or bind them with setLong
 * int rows = ps.executeUpdate();   // 0: the resource is absent, or its version is not the expected one
 * }</pre>
 *
 * <p>{@code If-Match} keeps the versions of its strong tags (weak tags and tags of another form never match by
 * strong comparison, so they are dropped); {@code If-Match: *} accepts any existing version. {@code If-None-Match}
 * excludes the versions its tags name, weak or strong (weak comparison); {@code If-None-Match: *} demands that the
 * resource be absent.
 */
public final class VersionCondition {
  private final boolean ifMatchPresent;
  private final boolean anyVersion;
  private final Set<Long> versions;
  private final Set<Long> excluded;
  private final boolean mustBeAbsent;

  private VersionCondition(boolean ifMatchPresent, boolean anyVersion, Set<Long> versions, Set<Long> excluded,
      boolean mustBeAbsent) {
    this.ifMatchPresent = ifMatchPresent;
    this.anyVersion = anyVersion;
    this.versions = versions;
    this.excluded = excluded;
    this.mustBeAbsent = mustBeAbsent;
  }

  static VersionCondition of(ETagList ifMatch, ETagList ifNoneMatch) {
    Set<Long> versions = new LinkedHashSet<>();
    if (ifMatch != null) {
      for (ETag t : ifMatch.tags()) {
        t.version().ifPresent(versions::add);
      }
    }
    Set<Long> excluded = new LinkedHashSet<>();
    if (ifNoneMatch != null) {
      for (ETag t : ifNoneMatch.tags()) {
        ETag.versionOf(t.opaque()).ifPresent(excluded::add);
      }
    }
    versions.removeAll(excluded);
    return new VersionCondition(ifMatch != null, ifMatch == null || ifMatch.isAny(),
        Collections.unmodifiableSet(versions), Collections.unmodifiableSet(excluded),
        ifNoneMatch != null && ifNoneMatch.isAny());
  }

  /** Whether the request asks to create the resource only when absent: {@code If-None-Match: *} without If-Match. */
  public boolean createOnly() {
    return mustBeAbsent && !ifMatchPresent;
  }

  /**
   * Whether an update of an existing resource can satisfy the preconditions at all. False for
   * {@code If-None-Match: *} (the resource exists when it is updated) and for an {@code If-Match} list with no
   * usable version: answer 412 without writing.
   */
  public boolean updatable() {
    return !mustBeAbsent && (anyVersion || !versions.isEmpty());
  }

  /** Whether an existing resource at this version satisfies the preconditions. */
  public boolean matches(long version) {
    return !mustBeAbsent && (anyVersion || versions.contains(version)) && !excluded.contains(version);
  }

  /**
   * The condition as SQL to append to a {@code WHERE} clause: {@code ""}, or {@code " AND <column> IN (?, ...)"}
   * and/or {@code " AND <column> NOT IN (?, ...)"}, with one placeholder per version. Only for
   * {@link #updatable()} conditions.
   *
   * @param column the version column, a trusted identifier (never user input)
   */
  public String sql(String column) {
    if (!updatable()) {
      throw new IllegalStateException("no update satisfies these preconditions; answer 412 without writing");
    }
    StringBuilder out = new StringBuilder();
    if (!anyVersion) {
      out.append(" AND ").append(column).append(versions.size() == 1 ? " = ?" : " IN " + placeholders(versions));
    }
    if (!excluded.isEmpty()) {
      out.append(" AND ").append(column).append(excluded.size() == 1 ? " <> ?" : " NOT IN " + placeholders(excluded));
    }
    return out.toString();
  }

  /**
   * The values of {@link #sql}'s placeholders, in order: the accepted versions (none when any version is accepted),
   * then the excluded ones. Bind them with {@code setLong}, or with {@code dev.idem.jdbc.VersionParameters}.
   */
  public List<Long> parameters() {
    List<Long> out = new ArrayList<>(versions.size() + excluded.size());
    if (!anyVersion) {
      out.addAll(versions);
    }
    out.addAll(excluded);
    return Collections.unmodifiableList(out);
  }

  private static String placeholders(Set<Long> values) {
    StringJoiner j = new StringJoiner(", ", "(", ")");
    values.forEach(v -> j.add("?"));
    return j.toString();
  }

  @Override
  public String toString() {
    return "VersionCondition[" + (mustBeAbsent ? "absent" : anyVersion ? "any version" : "versions " + versions)
        + (excluded.isEmpty() ? "" : ", not " + excluded) + "]";
  }
}
