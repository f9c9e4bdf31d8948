package dev.idem.core;

/** Idem was set up in a way that cannot work; the message names the setting and the value. */
public class ConfigurationException extends IdemException {
  private static final long serialVersionUID = 1L;

  public ConfigurationException(String message) {
    super(message);
  }
}
