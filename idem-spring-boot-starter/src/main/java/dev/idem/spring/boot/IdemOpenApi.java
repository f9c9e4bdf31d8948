package dev.idem.spring.boot;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * Idem's HTTP contract as an OpenAPI 3.1 fragment, for an application to merge into its own API description: the
 * {@code Idempotency-Key} request header ({@code components.parameters.IdempotencyKey}), the response headers the
 * filter sets, the problem document ({@code components.schemas.Problem}), and one response per problem code Idem
 * writes ({@code components.responses}, named by the code), each with its status and {@code retryable} (as
 * {@code x-status} and {@code x-retryable}, and in its example). The codes are the constants of {@link ProblemCode},
 * so the fragment cannot drift from them; a payload mismatch carries the configured {@code mismatch-status}.
 *
 * <p>The starter serves it at {@code idem.openapi.path} when that property is set. Immutable and thread-safe: the
 * document is rendered once.
 */
public final class IdemOpenApi {
  /** The media type of {@link #json()}. */
  public static final String MEDIA_TYPE = "application/json";

  private final String json;

  /**
   * The fragment for a filter that answers a payload mismatch with {@code mismatchStatus}.
   *
   * @param mismatchStatus 422 or 409, as {@code idem.filter.mismatch-status}
   */
  public IdemOpenApi(int mismatchStatus) {
    this.json = render(mismatchStatus);
  }

  /** The fragment, as JSON text. */
  public String json() {
    return json;
  }

  /** Every {@link ProblemCode} constant, in declaration order. */
  static List<ProblemCode> problemCodes() {
    List<ProblemCode> codes = new ArrayList<>();
    for (Field f : ProblemCode.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == ProblemCode.class) {
        try {
          codes.add((ProblemCode) f.get(null));
        } catch (IllegalAccessException e) {
          throw new IllegalStateException("ProblemCode." + f.getName() + " is not readable", e);
        }
      }
    }
    return codes;
  }

  private static String render(int mismatchStatus) {
    List<ProblemCode> codes = new ArrayList<>();
    for (ProblemCode code : problemCodes()) {
      codes.add(code.equals(ProblemCode.PAYLOAD_MISMATCH) ? code.withStatus(mismatchStatus) : code);
    }
    StringBuilder out = new StringBuilder(8192);
    out.append("{\"openapi\":\"3.1.0\",\"info\":{\"title\":\"Idem HTTP contract\",\"version\":\"1\"},\"paths\":{},")
        .append("\"components\":{\"parameters\":{\"IdempotencyKey\":{\"name\":")
        .append(quote(IdemHeaders.IDEMPOTENCY_KEY))
        .append(",\"in\":\"header\",\"required\":true,\"description\":")
        .append(quote("A key the client draws for one intent (a UUID) and sends again, unchanged, with every retry of"
            + " it. Visible ASCII, 1 to " + IdempotencyKey.MAX_LENGTH + " characters, bare or as a Structured Field"
            + " string."))
        .append(",\"schema\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":").append(IdempotencyKey.MAX_LENGTH)
        .append(",\"pattern\":\"^[!-~]+$\"}}},\"headers\":{")
        .append(quote(IdemHeaders.IDEMPOTENCY_STATUS))
        .append(":{\"description\":\"stored: the answer was kept; replayed: a kept answer sent again\",")
        .append("\"schema\":{\"type\":\"string\",\"enum\":[\"stored\",\"replayed\"]}},")
        .append(quote(IdemHeaders.IDEMPOTENT_REPLAYED))
        .append(":{\"description\":\"true on replays\",\"schema\":{\"type\":\"string\",\"enum\":[\"true\"]}},")
        .append(quote(IdemHeaders.RETRY_AFTER))
        .append(":{\"description\":\"seconds to wait before retrying\",")
        .append("\"schema\":{\"type\":\"integer\",\"minimum\":1}}},")
        .append("\"schemas\":{\"Problem\":{\"type\":\"object\",\"description\":\"RFC 9457 problem document\",")
        .append("\"required\":[\"type\",\"title\",\"status\",\"code\",\"retryable\"],\"properties\":{")
        .append("\"type\":{\"type\":\"string\"},\"title\":{\"type\":\"string\"},\"status\":{\"type\":\"integer\"},")
        .append("\"detail\":{\"type\":\"string\"},\"code\":{\"type\":\"string\",\"enum\":[");
    for (int i = 0; i < codes.size(); i++) {
      out.append(i == 0 ? "" : ",").append(quote(codes.get(i).code()));
    }
    out.append("]},\"retryable\":{\"type\":\"boolean\"},")
        .append("\"fields\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},")
        .append("\"expired_at\":{\"type\":\"string\",\"format\":\"date-time\"}}}},\"responses\":{");
    for (int i = 0; i < codes.size(); i++) {
      ProblemCode c = codes.get(i);
      out.append(i == 0 ? "" : ",").append(quote(c.code())).append(":{\"description\":")
          .append(quote(c.status() + " " + c.title())).append(",\"x-status\":").append(c.status())
          .append(",\"x-retryable\":").append(c.retryable())
          .append(",\"content\":{\"application/problem+json\":{\"schema\":{\"$ref\":\"#/components/schemas/Problem\"},")
          .append("\"example\":{\"type\":").append(quote("urn:idem:problem:" + c.code())).append(",\"title\":")
          .append(quote(c.title())).append(",\"status\":").append(c.status()).append(",\"code\":")
          .append(quote(c.code())).append(",\"retryable\":").append(c.retryable()).append("}}}}");
    }
    return out.append("}}}").toString();
  }

  /** A JSON string literal: the texts here are this class's own and the constants' titles. */
  private static String quote(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2).append('"');
    for (char ch : text.toCharArray()) {
      if (ch == '"' || ch == '\\') {
        out.append('\\').append(ch);
      } else if (ch < 0x20) {
        out.append(String.format("\\u%04x", (int) ch));
      } else {
        out.append(ch);
      }
    }
    return out.append('"').toString();
  }
}
