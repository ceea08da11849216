package io.shardtrain.compute.fuzz;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Hostile inputs for the decoders' fuzz tests (jqwik properties named {@code *FuzzTest}), and the
 * check each decoder must pass on every one of them: it returns, or throws one of the error types
 * it documents with a message; it never throws anything else (no {@code OutOfMemoryError},
 * {@code NegativeArraySizeException}, {@code StackOverflowError}), never allocates much more than
 * its input's size, and never takes long.
 *
 * <p>Inputs are random bytes and mutants of valid encodings: the mutants get past the first checks
 * (magic, format byte, header) and reach the length and count fields, which random bytes rarely do.
 */
public final class Hostile {
  private Hostile() {}

  /** Ints that a length or count field mishandles: signs, powers of two, near the array limits. */
  private static final int[] EDGE_INTS = {0, 1, -1, 2, 7, 255, 256, 0xFFFF, 0x10000, 0x7FFF_FFFF, 0x8000_0000,
      0x7FFF_FFF8, 0x4000_0000, 0x2000_0000, 0x1000_0000, 0x0100_0000, 0xFFFF_FFF0, 1 << 20};
  /** Tokens that a text reader's numbers and separators mishandle. */
  private static final String[] EDGE_TOKENS = {"0", "-1", "1", "2147483647", "2147483648", "-2147483648",
      "4294967296", "9223372036854775807", "9223372036854775808", "1e39", "-1e39", "1e-46", "3.4028236e38", "NaN",
      "Infinity", "-Infinity", "1E2147483648", "0.5", "00", "+1", "--1", "0x1f", " ", "\t", "\n", "\r\n", ",", ":",
      ";", "#", "\"", "'", "(", ")", "[", "]", "{", "}", "\\", "\\u0000", "\u0000", "\uFFFD", "qid:1", "1:1",
      "2147483647:1", "0:1", "-5:2"};

  /** Random bytes (up to 300) and mutants of {@code seeds}, each a valid encoding of the format. */
  public static Arbitrary<byte[]> bytes(List<byte[]> seeds) {
    return inputs(seeds, false);
  }

  /** As {@link #bytes}, for text formats: mutations also insert numbers and separators. */
  public static Arbitrary<byte[]> text(List<String> seeds) {
    return inputs(seeds.stream().map(s -> s.getBytes(StandardCharsets.UTF_8)).toList(), true);
  }

  private static Arbitrary<byte[]> inputs(List<byte[]> seeds, boolean text) {
    List<byte[]> copies = seeds.stream().map(byte[]::clone).toList();
    return Arbitraries.randomValue(r -> r.nextInt(8) == 0 ? random(r) : mutant(copies.get(r.nextInt(copies.size())), r, text));
  }

  /** Up to 300 random bytes. */
  public static byte[] random(Random r) {
    byte[] b = new byte[r.nextInt(300)];
    r.nextBytes(b);
    return b;
  }

  /** {@code seed} after one to four mutations; {@code text}: they include tokens of text formats. */
  public static byte[] mutant(byte[] seed, Random r, boolean text) {
    byte[] b = seed;
    int rounds = 1 + r.nextInt(4);
    for (int i = 0; i < rounds; i++) b = mutate(b, r, text);
    return b;
  }

  /** {@code b} with one mutation; {@code b} itself is left as it is. */
  static byte[] mutate(byte[] b, Random r, boolean text) {
    int ops = text ? 9 : 8;
    int n = b.length;
    switch (r.nextInt(ops)) {
      case 0 -> { // one bit
        if (n == 0) return b;
        byte[] c = b.clone();
        c[r.nextInt(n)] ^= (byte) (1 << r.nextInt(8));
        return c;
      }
      case 1 -> { // one byte
        if (n == 0) return b;
        byte[] c = b.clone();
        c[r.nextInt(n)] = (byte) r.nextInt(256);
        return c;
      }
      case 2, 3 -> { // an edge int over 4 bytes, either byte order (IDX is big-endian, the rest little)
        if (n < 4) return b;
        byte[] c = b.clone();
        int v = r.nextInt(4) == 0 ? r.nextInt() : EDGE_INTS[r.nextInt(EDGE_INTS.length)];
        int at = r.nextInt(n - 3);
        boolean little = r.nextBoolean();
        for (int k = 0; k < 4; k++) c[at + k] = (byte) (v >>> (8 * (little ? k : 3 - k)));
        return c;
      }
      case 4 -> { // truncated
        return Arrays.copyOf(b, n == 0 ? 0 : r.nextInt(n));
      }
      case 5 -> { // a span cut out
        if (n == 0) return b;
        int from = r.nextInt(n);
        int to = from + 1 + r.nextInt(Math.min(16, n - from));
        return concat(Arrays.copyOf(b, from), Arrays.copyOfRange(b, to, n));
      }
      case 6 -> { // random bytes inserted
        byte[] ins = new byte[1 + r.nextInt(8)];
        r.nextBytes(ins);
        return insert(b, r.nextInt(n + 1), ins);
      }
      case 7 -> { // a span repeated
        if (n == 0) return b;
        int from = r.nextInt(n);
        int to = from + 1 + r.nextInt(Math.min(64, n - from));
        return insert(b, to, Arrays.copyOfRange(b, from, to));
      }
      default -> { // a token
        String t = EDGE_TOKENS[r.nextInt(EDGE_TOKENS.length)];
        return insert(b, r.nextInt(n + 1), t.getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  private static byte[] insert(byte[] b, int at, byte[] ins) {
    return concat(concat(Arrays.copyOf(b, at), ins), Arrays.copyOfRange(b, at, b.length));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** A decoding that may throw. */
  public interface Decoding {
    void run() throws Exception;
  }

  /** Bytes this thread has allocated so far (HotSpot's count). */
  public static long allocatedBytes() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
  }

  /**
   * Runs {@code decoding} of {@code input} and returns what it threw (null when it returned).
   * Fails unless that is an instance of one of {@code allowed} with a message, the decoding
   * allocated at most {@code slack} bytes plus {@code perByte} times the input's length, and it
   * took under 10 seconds.
   */
  public static Throwable check(byte[] input, long slack, int perByte, Decoding decoding,
      List<Class<? extends Throwable>> allowed) {
    long before = allocatedBytes();
    long t0 = System.nanoTime();
    Throwable caught = null;
    try {
      decoding.run();
    } catch (Throwable t) {
      caught = t;
    }
    Throwable thrown = caught;
    long allocated = allocatedBytes() - before;
    long millis = (System.nanoTime() - t0) / 1_000_000;
    if (thrown != null && (allowed.stream().noneMatch(c -> c.isInstance(thrown)) || thrown.getMessage() == null
        || thrown.getMessage().isBlank())) {
      throw new AssertionError("decoding " + describe(input) + " threw " + thrown, thrown);
    }
    long limit = slack + (long) perByte * input.length;
    if (allocated > limit) {
      // A path's first run may bootstrap classes (a record's toString, a lambda) whatever the
      // input; an input that makes the decoder allocate does so the second time too.
      long again = allocatedBytes();
      try {
        decoding.run();
      } catch (Throwable t) {
        // Thrown the first time too, and checked above.
      }
      allocated = allocatedBytes() - again;
    }
    if (allocated > limit) {
      throw new AssertionError("decoding " + describe(input) + " allocated " + allocated + " bytes, more than "
          + limit);
    }
    if (millis > 10_000) throw new AssertionError("decoding " + describe(input) + " took " + millis + " ms");
    return thrown;
  }

  /** {@code input}'s length and its first bytes in hex, for a failure message. */
  public static String describe(byte[] input) {
    return input.length + " bytes " + HexFormat.of().formatHex(input, 0, Math.min(input.length, 96))
        + (input.length > 96 ? "..." : "");
  }
}
