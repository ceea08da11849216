package io.shardtrain.compute.data;

/**
 * A dataset that could not be found or fetched. The message is one line saying what failed and
 * what to do about it, fit to show a user as is.
 */
public final class DataUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DataUnavailableException(String message) {
    super(message);
  }

  public DataUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
