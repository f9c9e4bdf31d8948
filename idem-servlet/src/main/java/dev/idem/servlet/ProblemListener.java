package dev.idem.servlet;

/**
 * Told which problem an answer is, without reading its bytes: a {@code ServletResponseWrapper} in
 * the response chain that implements it is called by {@link Problem#write} (and {@link Problem#announce}) for every
 * problem written through it, such as the Spring Boot starter's MDC filter, which logs the code.
 */
public interface ProblemListener {
  /**
   * A problem is being written as the answer: its status and content type are set, its body comes next. Called on
   * the thread that writes it; must be quick and must not throw.
   *
   * @param code the problem's {@code code} member, such as {@code CONFLICT.idempotency.in_progress}
   */
  void problemWritten(String code);
}
