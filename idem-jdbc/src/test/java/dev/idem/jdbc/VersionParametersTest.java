package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class VersionParametersTest {
  @Test
  void bindsEachVersionInOrderAndReturnsTheNextIndex() throws Exception {
    Map<Integer, Long> bound = new TreeMap<>();
    PreparedStatement ps = (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {PreparedStatement.class}, (p, m, args) -> {
          if (m.getName().equals("setLong")) {
            bound.put((Integer) args[0], (Long) args[1]);
          }
          return null;
        });

    int next = VersionParameters.bind(ps, 4, List.of(3L, 5L, 6L));

    assertThat(next).isEqualTo(7);
    assertThat(bound).containsExactly(Map.entry(4, 3L), Map.entry(5, 5L), Map.entry(6, 6L));
    assertThat(VersionParameters.bind(ps, 2, List.of())).isEqualTo(2);
  }
}
