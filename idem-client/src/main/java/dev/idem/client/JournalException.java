package dev.idem.client;

import dev.idem.core.IdemException;

/** A journal could not read or write its storage, or a record does not fit. The message names the journal and file. */
public class JournalException extends IdemException {
  private static final long serialVersionUID = 1L;

  public JournalException(String message, Throwable cause) {
    super(message, cause);
  }

  public JournalException(String message) {
    super(message);
  }
}
