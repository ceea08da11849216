package io.shardtrain.compute.data;

/**
 * A data file whose content is wrong: a bad magic number, a truncated file, a line that does not
 * parse. The message names the file (and the line, for text formats) and what is wrong. It is an
 * {@link IllegalArgumentException} because the input, not the program, is at fault.
 */
public final class MalformedDataException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public MalformedDataException(String message) {
    super(message);
  }

  public MalformedDataException(String message, Throwable cause) {
    super(message, cause);
  }
}
