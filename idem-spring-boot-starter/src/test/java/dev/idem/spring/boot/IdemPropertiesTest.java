package dev.idem.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.RecordKey;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Where the MDC filter goes relative to the idempotency filter ({@code idem.logging.mdc.order}), and the default
 * retention ({@code idem.default-retention}).
 */
class IdemPropertiesTest {
  private final IdemProperties.Mdc mdc = new IdemProperties().getLogging().getMdc();

  @Test
  void unsetTheMdcFilterGoesBeforeAuthenticationAndAlwaysBeforeTheIdempotencyFilter() {
    assertThat(mdc.effectiveOrder(0)).isEqualTo(Integer.MIN_VALUE + 50);
    assertThat(mdc.effectiveOrder(Integer.MIN_VALUE + 51)).isEqualTo(Integer.MIN_VALUE + 50);
    assertThat(mdc.effectiveOrder(Integer.MIN_VALUE + 50)).isEqualTo(Integer.MIN_VALUE + 49);
    assertThat(mdc.effectiveOrder(Integer.MIN_VALUE + 1)).isEqualTo(Integer.MIN_VALUE);
    assertThat(mdc.effectiveOrder(Integer.MIN_VALUE)).as("nothing is lower: a tie, broken by registration order")
        .isEqualTo(Integer.MIN_VALUE);
  }

  @Test
  void unsetItNeverConflictsWhateverTheIdempotencyFiltersOrder() {
    for (int order : new int[] {Integer.MIN_VALUE, Integer.MIN_VALUE + 1, Integer.MIN_VALUE + 50, -100, 0,
        Integer.MAX_VALUE}) {
      assertThatCode(() -> mdc.validate(order)).as("idem.filter.order %d", order).doesNotThrowAnyException();
    }
  }

  @Test
  void anExplicitOrderIsKeptWhenLowerAndRefusedOtherwiseNamingBothProperties() {
    mdc.setOrder(-200);

    int order = mdc.effectiveOrder(0);

    assertThat(order).isEqualTo(-200);
    assertThatThrownBy(() -> mdc.validate(-200)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("idem.logging.mdc.order (-200) must be lower than idem.filter.order (-200)");
    assertThatThrownBy(() -> mdc.validate(Integer.MIN_VALUE)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("leave it unset");
  }

  @Test
  void theStarterKeepsTheSameHeadersForReplaysAsTheFilter() {
    assertThat(new IdemProperties().getFilter().getKeepHeaders())
        .containsExactlyInAnyOrderElementsOf(dev.idem.servlet.IdempotencyFilter.DEFAULT_KEPT_HEADERS);
  }

  @Test
  void theDefaultRetentionIsThirtyDaysZeroTurnsItOffAndANegativeOneIsRefused() {
    IdemProperties properties = new IdemProperties();
    Duration byDefault = IdemAutoConfiguration.defaults(properties).retention();
    properties.setDefaultRetention(Duration.ZERO);
    properties.validate();
    Duration off = IdemAutoConfiguration.defaults(properties).retention();
    properties.setDefaultRetention(Duration.ofSeconds(-1));

    assertThat(byDefault).isEqualTo(Duration.ofDays(30));
    assertThat(off).isZero();
    assertThatThrownBy(properties::validate).isInstanceOf(IllegalStateException.class)
        .hasMessage("idem.default-retention must be zero or a positive duration, got PT-1S");
  }

  @Test
  void theOpenApiPathIsAPathWithoutWildcards() {
    IdemProperties properties = new IdemProperties();
    properties.getOpenapi().setPath("idem/openapi.json");

    assertThatThrownBy(properties::validate).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("idem.openapi.path must be a path starting with /");
    properties.getOpenapi().setPath("/idem/openapi.json");
    assertThatCode(properties::validate).doesNotThrowAnyException();
  }

  @Test
  void theRecordLinkTemplateTakesTheRecordsScopeOperationAndKeyUrlEncoded() {
    String link = IdemAutoConfiguration.Web.recordLink("/admin/records/{scope}/{key}?operation={operation}",
        RecordKey.of("acme corp", "POST /payments", "k/1"));

    assertThat(link).isEqualTo("/admin/records/acme+corp/k%2F1?operation=POST+%2Fpayments");
  }

  @Test
  void theResumeCapIsValidatedAndReachesTheDefaultPolicy() {
    IdemProperties properties = new IdemProperties();
    properties.setDefaultResumeCapAttempts(0);

    assertThatThrownBy(properties::validate).hasMessageContaining("idem.default-resume-cap-attempts must be 1..1000");
    properties.setDefaultResumeCapAttempts(4);
    properties.setDefaultResumeCapAge(Duration.ofHours(2));
    properties.validate();
    assertThat(IdemAutoConfiguration.defaults(properties).resumeCapAttempts()).isEqualTo(4);
    assertThat(IdemAutoConfiguration.defaults(properties).resumeCapAge()).isEqualTo(Duration.ofHours(2));
  }
}
