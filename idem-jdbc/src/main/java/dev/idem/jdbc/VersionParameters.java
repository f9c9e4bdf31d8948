package dev.idem.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;

/**
 * Binds the versions of a version check, such as idem-servlet's {@code VersionCondition#parameters()}, to the
 * placeholders its {@code sql(column)} appended to a {@code WHERE} clause, so that the check and the write are one
 * statement.
 *
 * <pre>{@code
 * PreparedStatement ps = c.prepareStatement("UPDATE account SET name = ?, version = version + 1"
 *     + " WHERE id = ?" + expected.sql("version"));
 * ps.setString(1, name);
 * ps.setString(2, id);
 * VersionParameters.bind(ps, 3, expected.parameters());
 * }</pre>
 */
public final class VersionParameters {
  private VersionParameters() {}

  /**
   * Binds {@code versions} with {@code setLong}, in order, from {@code index} on.
   *
   * @return the next free parameter index
   */
  public static int bind(PreparedStatement statement, int index, List<Long> versions) throws SQLException {
    Objects.requireNonNull(statement, "statement");
    Objects.requireNonNull(versions, "versions");
    int i = index;
    for (Long v : versions) {
      statement.setLong(i++, Objects.requireNonNull(v, "a version is null"));
    }
    return i;
  }
}
