package dev.idem.servlet;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Scales the tries of every fuzz property by the system property {@code idem.fuzz.scale} (default 1), so that a long
 * run is {@code mvn verify -Didem.fuzz.scale=20} without editing the counts sized for CI. Each module that fuzzes
 * keeps its own copy: test sources are not shared between modules.
 */
final class FuzzTries implements AroundPropertyHook {
  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    double scale = Double.parseDouble(System.getProperty("idem.fuzz.scale", "1"));
    context.attributes().tries().ifPresent(tries -> context.attributes().setTries(Math.max(1, (int) (tries * scale))));
    return property.execute();
  }

  @Override
  public PropagationMode propagateTo() {
    return PropagationMode.ALL_DESCENDANTS;
  }

  @Override
  public int aroundPropertyProximity() {
    return -100; // outside jqwik's own hooks, which read the tries when the property starts
  }
}
