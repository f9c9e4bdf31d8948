package dev.idem.core.internal.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.fingerprint.JsonCanonicalizer;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class JsonWriterTest {

  @Test
  void writesCanonicalFormOfATree() {
    Map<String, Object> tree = new LinkedHashMap<>();
    tree.put("b", Arrays.asList(1, 2.50, -0.0, null, JsonNull.INSTANCE, true));
    tree.put("a", Map.of("é", "x\u0001\u007f\"\\/\n"));
    tree.put("\uD83D\uDE00", 1e21);
    tree.put("\uFB33", 1e-7);

    String json = JsonWriter.write(tree);

    assertThat(json).isEqualTo("{\"a\":{\"é\":\"x\\u0001\u007f\\\"\\\\/\\n\"},\"b\":[1,2.5,0,null,null,true],"
        + "\"\uD83D\uDE00\":1e+21,\"\uFB33\":1e-7}");
    assertThat(JsonWriter.writeUtf8(tree)).isEqualTo(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void writesIntegralNumbersAsDoublesWouldBe() {
    assertThat(JsonWriter.write(List.of(42, -7L, (short) 3, (byte) -1, 9007199254740993L, new BigDecimal("0.10"), 1.5f)))
        .isEqualTo("[42,-7,3,-1,9007199254740992,0.1,1.5]");
  }

  @Test
  void rejectsWhatJsonCannotCarry() {
    assertThatThrownBy(() -> JsonWriter.write(List.of(Double.NaN))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NaN");
    assertThatThrownBy(() -> JsonWriter.write(List.of(Double.POSITIVE_INFINITY))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> JsonWriter.write("a\uD800")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lone surrogate U+D800 at index 1 of a string (not allowed by I-JSON)");
    assertThatThrownBy(() -> JsonWriter.write(Map.of(1, 2))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("member names must be strings");
    assertThatThrownBy(() -> JsonWriter.write(new Object())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot write java.lang.Object");
  }

  @Test
  void rejectsCyclesThroughTheDepthLimit() {
    List<Object> cycle = new ArrayList<>();
    cycle.add(cycle);

    assertThatThrownBy(() -> JsonWriter.write(cycle)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deeper than 1024");
  }

  @Test
  void acceptsAnyMapImplementation() {
    Map<String, Object> map = new HashMap<>();
    map.put("b", 1);
    map.put("a", 2);

    assertThat(JsonWriter.write(map)).isEqualTo("{\"a\":2,\"b\":1}");
  }

  @Property(tries = 500)
  void treeWriterAgreesWithTheCanonicalizer(@ForAll("trees") Object tree, @ForAll Random random) {
    String text = JsonTrees.spell(tree, random);

    String viaTree = JsonWriter.write(JsonParser.parse(text));

    assertThat(viaTree).isEqualTo(JsonCanonicalizer.canonicalize(text)).isEqualTo(JsonWriter.write(tree));
  }

  @Provide
  Arbitrary<Object> trees() {
    return JsonTrees.values(3);
  }
}
