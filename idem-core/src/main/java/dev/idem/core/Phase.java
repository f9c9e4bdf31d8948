package dev.idem.core;

/** One named step of a {@link PhasedOperation}. */
@FunctionalInterface
public interface Phase {
  PhaseResult run(PhaseContext context) throws Exception;
}
