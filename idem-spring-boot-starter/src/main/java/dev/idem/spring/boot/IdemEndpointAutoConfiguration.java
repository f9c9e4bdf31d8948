package dev.idem.spring.boot;

import dev.idem.core.spi.IdempotencyStore;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * The {@code idempotency} actuator endpoint, when the actuator is present and the endpoint is exposed, on the one
 * {@link IdempotencyStore} bean (or the {@code @Primary} one); none with several stores and none primary.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
public class IdemEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(IdempotencyStore.class)
  @ConditionalOnAvailableEndpoint
  IdempotencyEndpoint idempotencyEndpoint(IdempotencyStore store) {
    return new IdempotencyEndpoint(store);
  }
}
