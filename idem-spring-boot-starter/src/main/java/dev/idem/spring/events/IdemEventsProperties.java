package dev.idem.spring.events;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code idem.events.*} properties; checked at startup. */
@ConfigurationProperties(prefix = "idem.events")
public class IdemEventsProperties {
  /** Whether events published through Spring's ApplicationEventPublisher are written to the outbox. */
  private boolean enabled = true;
  /**
   * Destinations of event classes that are not {@code @Externalized}, by fully qualified class name (in brackets:
   * {@code idem.events.routes[com.example.PaymentSucceeded]=webhook:payments}); the outbox event type is the class's
   * simple name. An entry wins over the class's annotation.
   */
  private Map<String, String> routes = new LinkedHashMap<>();
  /**
   * What an externalized event published while no Spring transaction is active, in one that holds no connection of the
   * outbox's data source, or in its after-commit or after-completion phase, does.
   */
  private OutsideTransaction outsideTransaction = OutsideTransaction.FAIL;
  /** Find {@code @Externalized} classes in the application's packages at startup, to check them before any is sent. */
  private boolean scan = true;

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Map<String, String> getRoutes() {
    return routes;
  }

  public void setRoutes(Map<String, String> routes) {
    this.routes = routes;
  }

  public OutsideTransaction getOutsideTransaction() {
    return outsideTransaction;
  }

  public void setOutsideTransaction(OutsideTransaction outsideTransaction) {
    this.outsideTransaction = outsideTransaction;
  }

  public boolean isScan() {
    return scan;
  }

  public void setScan(boolean scan) {
    this.scan = scan;
  }
}
