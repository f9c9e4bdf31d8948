package dev.idem.spring.events;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionEvaluationReport;
import org.springframework.core.env.Environment;

/**
 * Stops the start when the application has events to write to the outbox ({@link Externalized} classes found by the
 * scan, or {@code idem.events.routes}) but no {@link ExternalizedEvents} listener was created: its events would be
 * ordinary application events, written nowhere, with nothing thrown. Names the condition that did not match.
 */
final class ExternalizedEventsCheck implements SmartInitializingSingleton {
  /** The listener's bean method, as the condition evaluation report names it. */
  private static final String SOURCE = IdemEventsAutoConfiguration.class.getName() + "#externalizedEvents";

  private final ConfigurableListableBeanFactory beanFactory;
  private final IdemEventsProperties properties;
  private final Environment environment;

  ExternalizedEventsCheck(ConfigurableListableBeanFactory beanFactory, IdemEventsProperties properties,
      Environment environment) {
    this.beanFactory = beanFactory;
    this.properties = properties;
    this.environment = environment;
  }

  @Override
  public void afterSingletonsInstantiated() {
    if (beanFactory.getBeanNamesForType(ExternalizedEvents.class, true, false).length > 0) {
      return;
    }
    SortedSet<String> events = ExternalizedScan.eventsToWrite(properties, beanFactory, environment);
    if (events.isEmpty()) {
      return;
    }
    throw new IllegalStateException("no ExternalizedEvents listener was created (" + reason() + "), so events of "
        + events + " (@Externalized, or in idem.events.routes) would be published to Spring only, never written to"
        + " the outbox, and nothing would throw. Give the application one Outbox bean and a single (or @Primary)"
        + " DataSource, define an ExternalizedEvents bean of your own, or set idem.events.enabled=false");
  }

  /** Why {@code externalizedEvents} did not match, from Spring Boot's condition evaluation report. */
  private String reason() {
    List<String> reasons = new ArrayList<>();
    ConditionEvaluationReport report = ConditionEvaluationReport.get(beanFactory);
    Map<String, ConditionEvaluationReport.ConditionAndOutcomes> bySource = report.getConditionAndOutcomesBySource();
    ConditionEvaluationReport.ConditionAndOutcomes outcomes = bySource.get(SOURCE);
    if (outcomes != null) {
      outcomes.forEach(o -> {
        if (!o.getOutcome().isMatch()) {
          reasons.add(o.getOutcome().getMessage());
        }
      });
    }
    return reasons.isEmpty() ? "its conditions did not match; run with --debug for the condition evaluation report"
        : "IdemEventsAutoConfiguration#externalizedEvents: " + String.join("; ", reasons);
  }
}
