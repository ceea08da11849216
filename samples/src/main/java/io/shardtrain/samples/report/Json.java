package io.shardtrain.samples.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;

/** Writes maps, lists, strings, numbers and booleans as JSON; enough for reports, no dependency. */
public final class Json {
  private Json() {}

  /** Writes {@code value} to {@code file}, making the directories its path names. */
  public static void writeFile(Path file, Object value) throws IOException {
    makeParent(file);
    Files.writeString(file, write(value));
  }

  /** Makes the directories {@code file}'s path names, up to the file itself. */
  public static void makeParent(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) Files.createDirectories(parent);
  }

  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb, 0);
    return sb.append('\n').toString();
  }

  private static void write(Object v, StringBuilder sb, int indent) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String s) {
      quote(s, sb);
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      // JSON has no NaN or Infinity; null says "no value" without breaking parsers.
      sb.append(Double.isFinite(d) ? Double.toString(d) : "null");
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        sb.append(first ? "\n" : ",\n");
        first = false;
        pad(sb, indent + 2);
        quote(String.valueOf(e.getKey()), sb);
        sb.append(": ");
        write(e.getValue(), sb, indent + 2);
      }
      if (!first) {
        sb.append('\n');
        pad(sb, indent);
      }
      sb.append('}');
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (Object o : c) {
        if (!first) sb.append(", ");
        first = false;
        write(o, sb, indent);
      }
      sb.append(']');
    } else if (v instanceof int[] a) {
      write(java.util.Arrays.stream(a).boxed().toList(), sb, indent);
    } else {
      quote(v.toString(), sb);
    }
  }

  private static void pad(StringBuilder sb, int n) {
    sb.append(" ".repeat(n));
  }

  private static void quote(String s, StringBuilder sb) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
        }
      }
    }
    sb.append('"');
  }
}
