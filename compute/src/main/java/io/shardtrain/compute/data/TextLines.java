package io.shardtrain.compute.data;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Path;

/** Line reading for the text readers: bytes that are not UTF-8 are a content error naming file and line. */
final class TextLines {
  private TextLines() {}

  /** The line after line {@code lineNo} of {@code file}, or null at its end. */
  static String next(BufferedReader r, Path file, int lineNo) throws IOException {
    try {
      return r.readLine();
    } catch (CharacterCodingException e) {
      // The reader decodes ahead of the line it returns, so the bad bytes are on this line or a later one.
      throw new MalformedDataException(file + ":" + (lineNo + 1) + ": not UTF-8 text at or after this line ("
          + e.getMessage() + ")", e);
    }
  }
}
