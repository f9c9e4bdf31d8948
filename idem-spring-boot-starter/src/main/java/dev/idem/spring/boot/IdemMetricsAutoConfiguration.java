package dev.idem.spring.boot;

import dev.idem.spring.internal.MicrometerListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/** Registers Idem's meters when Micrometer is present; see {@link MicrometerListener} for the meter names. */
@AutoConfiguration(
    afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
public class IdemMetricsAutoConfiguration {

  @Bean
  @ConditionalOnBean(MeterRegistry.class)
  MicrometerListener idemMicrometerListener(MeterRegistry registry) {
    return new MicrometerListener(registry);
  }
}
