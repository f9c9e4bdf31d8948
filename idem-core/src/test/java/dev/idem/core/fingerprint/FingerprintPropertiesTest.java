package dev.idem.core.fingerprint;

import static dev.idem.core.fingerprint.FingerprinterTest.sha256;
import static dev.idem.core.fingerprint.FingerprinterTest.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.internal.json.JsonPointer;
import dev.idem.core.internal.json.JsonTrees;
import dev.idem.core.internal.json.JsonWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class FingerprintPropertiesTest {
  private static final String OPERATION = "PUT /orders/{id}";

  @Property(tries = 500)
  void spellingDoesNotChangeTheFingerprint(@ForAll("bodies") Map<String, Object> body, @ForAll Random random) {
    Fingerprinter fp = Fingerprinter.ofDefaults();

    Fingerprint first = fp.fingerprint(OPERATION, utf8(JsonTrees.spell(body, random)), "application/json");
    Fingerprint second = fp.fingerprint(OPERATION, utf8(JsonTrees.spell(body, random)), null);

    assertThat(second).isEqualTo(first);
    assertThat(first.hash()).isEqualTo(sha256(OPERATION + "\nJ" + JsonWriter.write(body)));
    assertThat(first.fieldHashes().keySet()).isEqualTo(body.keySet());
    body.forEach((name, value) -> assertThat(first.fieldHashes().get(name)).isEqualTo(sha256(JsonWriter.write(value)).substring(0, 16)));
  }

  @Property(tries = 500)
  void anyChangeToAnIncludedValueChangesTheHashAndAnExcludedOneDoesNot(
      @ForAll("bodies") Map<String, Object> body, @ForAll Random random) {
    Assume.that(!body.isEmpty());
    List<String> path = new ArrayList<>();
    Map<String, Object> changed = deepCopy(body);
    replaceRandomValue(changed, path, random);
    String pointer = toPointer(path);
    String top = path.get(0);
    byte[] before = utf8(JsonTrees.spell(body, random));
    byte[] after = utf8(JsonTrees.spell(changed, random));

    Fingerprinter whole = Fingerprinter.ofDefaults();
    Fingerprinter including = Fingerprinter.of(FingerprintPolicy.builder().include(pointer).build());
    Fingerprinter includingTop = Fingerprinter.of(FingerprintPolicy.builder().include("/" + JsonPointer.escape(top)).build());
    Fingerprinter excluding = Fingerprinter.of(FingerprintPolicy.builder().exclude(pointer).build());
    Fingerprinter includingOthers = Fingerprinter.of(FingerprintPolicy.builder()
        .include(body.keySet().stream().filter(k -> !k.equals(top)).map(k -> "/" + JsonPointer.escape(k)).toArray(String[]::new))
        .build());

    assertThat(whole.fingerprint(OPERATION, after, null).hash()).isNotEqualTo(whole.fingerprint(OPERATION, before, null).hash());
    assertThat(whole.fingerprint(OPERATION, after, null).differingFields(whole.fingerprint(OPERATION, before, null)))
        .containsExactly(top);
    assertThat(including.fingerprint(OPERATION, after, null).hash()).isNotEqualTo(including.fingerprint(OPERATION, before, null).hash());
    assertThat(includingTop.fingerprint(OPERATION, after, null).hash())
        .isNotEqualTo(includingTop.fingerprint(OPERATION, before, null).hash());
    assertThat(excluding.fingerprint(OPERATION, after, null)).isEqualTo(excluding.fingerprint(OPERATION, before, null));
    if (body.size() > 1) {
      assertThat(includingOthers.fingerprint(OPERATION, after, null))
          .isEqualTo(includingOthers.fingerprint(OPERATION, before, null));
    }
  }

  @Provide
  Arbitrary<Map<String, Object>> bodies() {
    return JsonTrees.objects(2);
  }

  /** Walks down from {@code root} at random, replaces the value it stops at with one that is certainly different. */
  @SuppressWarnings("unchecked")
  private static void replaceRandomValue(Map<String, Object> root, List<String> path, Random random) {
    Object container = root;
    while (true) {
      if (container instanceof Map) {
        Map<String, Object> map = (Map<String, Object>) container;
        List<String> names = new ArrayList<>(map.keySet());
        String name = names.get(random.nextInt(names.size()));
        path.add(name);
        Object child = map.get(name);
        if (isNonEmptyContainer(child) && random.nextInt(3) > 0) {
          container = child;
          continue;
        }
        map.put(name, List.of("changed", child == null ? "null" : child));
        return;
      }
      List<Object> list = (List<Object>) container;
      int index = random.nextInt(list.size());
      path.add(Integer.toString(index));
      Object child = list.get(index);
      if (isNonEmptyContainer(child) && random.nextInt(3) > 0) {
        container = child;
        continue;
      }
      list.set(index, List.of("changed", child));
      return;
    }
  }

  private static boolean isNonEmptyContainer(Object v) {
    return v instanceof Map && !((Map<?, ?>) v).isEmpty() || v instanceof List && !((List<?>) v).isEmpty();
  }

  @SuppressWarnings("unchecked")
  private static <T> T deepCopy(T value) {
    if (value instanceof Map) {
      Map<String, Object> copy = new java.util.LinkedHashMap<>();
      ((Map<String, Object>) value).forEach((k, v) -> copy.put(k, deepCopy(v)));
      return (T) copy;
    }
    if (value instanceof List) {
      List<Object> copy = new ArrayList<>();
      for (Object v : (List<Object>) value) {
        copy.add(deepCopy(v));
      }
      return (T) copy;
    }
    return value;
  }

  private static String toPointer(List<String> path) {
    StringBuilder sb = new StringBuilder();
    for (String token : path) {
      sb.append('/').append(JsonPointer.escape(token));
    }
    return sb.toString();
  }
}
