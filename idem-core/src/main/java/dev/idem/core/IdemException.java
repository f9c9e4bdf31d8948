package dev.idem.core;

/**
 * The root of every exception Idem throws. Unchecked: callers catch the specific subclass they can act on.
 *
 * <p>Messages say what happened, with which values, and what to do about it. Subclasses carry the context
 * as accessors so that callers never parse a message.
 */
public class IdemException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public IdemException(String message) {
    super(message);
  }

  public IdemException(String message, Throwable cause) {
    super(message, cause);
  }
}
