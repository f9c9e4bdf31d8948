/**
 * Spring Boot auto-configuration of Idem's inbox consumers from properties ({@code idem.consumers.*}):
 * {@link dev.idem.spring.messaging.IdemConsumersAutoConfiguration} runs one
 * {@link dev.idem.spring.messaging.InboxConsumerLifecycle} per consumer (RabbitMQ, NATS JetStream or Kafka, each
 * when its Idem module is present), with {@link dev.idem.spring.messaging.ConsumerMetrics} when Micrometer is.
 * Properties: {@link dev.idem.spring.messaging.IdemConsumersProperties}.
 */
package dev.idem.spring.messaging;
