package io.shardtrain.persistence.model;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Maps parameter names to file names that are safe on every common file system, and back.
 *
 * <p>Percent-encoding of the UTF-8 bytes: {@code A-Z a-z 0-9 . _ -} stay as they are, every other
 * byte becomes {@code %XX} (upper-case hex), and a leading {@code .} becomes {@code %2E} so no
 * file is hidden or named {@code .}/{@code ..}. So {@code dense1.weight} stays
 * {@code dense1.weight} and {@code enc/attn weight} becomes {@code enc%2Fattn%20weight}.
 */
final class FileNames {
  /** File names longer than this (in bytes) are refused: most file systems stop at 255. */
  static final int MAX_FILE_NAME_BYTES = 255;

  private FileNames() {}

  /** The safe stem for {@code name}; the caller appends the extension. */
  static String encode(String name) {
    StringBuilder b = new StringBuilder();
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < utf8.length; i++) {
      int c = utf8[i] & 0xff;
      boolean plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
          || c == '_' || c == '-' || (c == '.' && i > 0);
      if (plain) b.append((char) c);
      else b.append('%').append(String.format("%02X", c));
    }
    return b.toString();
  }

  /** The parameter name whose {@link #encode} is {@code stem}. */
  static String decode(String stem) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < stem.length(); i++) {
      char c = stem.charAt(i);
      if (c == '%') {
        if (i + 3 > stem.length()) {
          throw new IllegalArgumentException("file name " + stem + " has a short %-escape at " + i);
        }
        try {
          out.write(Integer.parseInt(stem.substring(i + 1, i + 3), 16));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("file name " + stem + " has a bad %-escape at " + i);
        }
        i += 2;
      } else {
        out.write(c);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * Checks that a file name read from a manifest names a plain file inside the model directory:
   * no separator, not {@code .} or {@code ..}, not empty.
   */
  static boolean isPlainFileName(String f) {
    return !f.isEmpty() && !f.equals(".") && !f.equals("..") && f.indexOf('/') < 0
        && f.indexOf('\\') < 0 && f.indexOf('\0') < 0 && f.indexOf(':') < 0;
  }
}
