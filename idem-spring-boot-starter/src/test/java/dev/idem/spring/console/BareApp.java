package dev.idem.spring.console;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** An application that adds nothing to the starter: no authorizer, no audit, no outbox route. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class BareApp {}
