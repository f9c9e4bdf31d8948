package dev.idem.spring.boot;

import dev.idem.core.Idem;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.spi.IdempotencyStore;
import org.springframework.beans.factory.ObjectProvider;
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
  IdempotencyEndpoint idempotencyEndpoint(IdempotencyStore store, ObjectProvider<Idem> idem) {
    // with encryption at rest, the Idem's store opens what this store keeps sealed
    Idem engine = idem.getIfUnique();
    boolean sealing = engine != null && engine.store() instanceof EncryptedIdempotencyStore
        && ((EncryptedIdempotencyStore) engine.store()).unwrap() == store;
    return new IdempotencyEndpoint(sealing ? engine.store() : store);
  }
}
