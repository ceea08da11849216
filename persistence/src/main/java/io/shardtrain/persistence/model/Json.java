package io.shardtrain.persistence.model;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The small, strict JSON reader and string quoting the model manifest needs (RFC 8259).
 *
 * <p>Objects become {@link LinkedHashMap}s, arrays {@link List}s, numbers {@link BigDecimal}s (so
 * a 64-bit version survives), {@code null} becomes {@link #NULL}. A syntax error names the line
 * and column. Kept here rather than adding a JSON library to the persistence module for one file.
 */
final class Json {
  /** Stands for a JSON {@code null}, which a map value cannot hold. */
  static final Object NULL = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  /** Deepest nesting of arrays and objects: each level is a frame of the recursive parser. */
  static final int MAX_DEPTH = 256;

  private final String text;
  private int pos;
  private int depth;

  private Json(String text) {
    this.text = text;
  }

  /** Parses one JSON value that makes up the whole of {@code text}. */
  static Object parse(String text) {
    Json p = new Json(text);
    p.skipSpace();
    Object v = p.value();
    p.skipSpace();
    if (p.pos != text.length()) throw p.error("unexpected text after the JSON value");
    return v;
  }

  /** {@code s} as a JSON string literal. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }

  private Object value() {
    if (pos >= text.length()) throw error("unexpected end of input");
    char c = text.charAt(pos);
    switch (c) {
      case '{':
        enter();
        Map<String, Object> o = object();
        depth--;
        return o;
      case '[':
        enter();
        List<Object> a = array();
        depth--;
        return a;
      case '"':
        return string();
      case 't':
        literal("true");
        return Boolean.TRUE;
      case 'f':
        literal("false");
        return Boolean.FALSE;
      case 'n':
        literal("null");
        return NULL;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        throw error("unexpected character '" + c + "'");
    }
  }

  private void enter() {
    if (++depth > MAX_DEPTH) throw error("arrays and objects nested deeper than " + MAX_DEPTH);
  }

  private Map<String, Object> object() {
    Map<String, Object> out = new LinkedHashMap<>();
    pos++;
    skipSpace();
    if (peek() == '}') {
      pos++;
      return out;
    }
    while (true) {
      skipSpace();
      if (peek() != '"') throw error("expected a string key");
      int keyAt = pos;
      String key = string();
      skipSpace();
      expect(':');
      skipSpace();
      Object v = value();
      if (out.put(key, v) != null) {
        pos = keyAt;
        throw error("duplicate key \"" + key + "\"");
      }
      skipSpace();
      char c = peek();
      pos++;
      if (c == '}') return out;
      if (c != ',') {
        pos--;
        throw error("expected ',' or '}'");
      }
    }
  }

  private List<Object> array() {
    List<Object> out = new ArrayList<>();
    pos++;
    skipSpace();
    if (peek() == ']') {
      pos++;
      return out;
    }
    while (true) {
      skipSpace();
      out.add(value());
      skipSpace();
      char c = peek();
      pos++;
      if (c == ']') return out;
      if (c != ',') {
        pos--;
        throw error("expected ',' or ']'");
      }
    }
  }

  private String string() {
    pos++;
    StringBuilder b = new StringBuilder();
    while (true) {
      if (pos >= text.length()) throw error("unterminated string");
      char c = text.charAt(pos++);
      if (c == '"') return b.toString();
      if (c < 0x20) {
        pos--;
        throw error("control character in string");
      }
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (pos >= text.length()) throw error("unterminated string");
      char e = text.charAt(pos++);
      switch (e) {
        case '"' -> b.append('"');
        case '\\' -> b.append('\\');
        case '/' -> b.append('/');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'n' -> b.append('\n');
        case 'r' -> b.append('\r');
        case 't' -> b.append('\t');
        case 'u' -> {
          if (pos + 4 > text.length()) throw error("short \\u escape");
          try {
            b.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
          } catch (NumberFormatException ex) {
            throw error("bad \\u escape");
          }
          pos += 4;
        }
        default -> {
          pos--;
          throw error("bad escape \\" + e);
        }
      }
    }
  }

  private BigDecimal number() {
    int start = pos;
    if (peek() == '-') pos++;
    if (peek() == '0') {
      pos++;
    } else if (Character.isDigit(peek())) {
      while (Character.isDigit(peek())) pos++;
    } else {
      throw error("bad number");
    }
    if (peek() == '.') {
      pos++;
      if (!Character.isDigit(peek())) throw error("bad number");
      while (Character.isDigit(peek())) pos++;
    }
    if (peek() == 'e' || peek() == 'E') {
      pos++;
      if (peek() == '+' || peek() == '-') pos++;
      if (!Character.isDigit(peek())) throw error("bad number");
      while (Character.isDigit(peek())) pos++;
    }
    return new BigDecimal(text.substring(start, pos));
  }

  private void literal(String word) {
    if (!text.startsWith(word, pos)) throw error("unexpected token");
    pos += word.length();
  }

  private void expect(char c) {
    if (peek() != c) throw error("expected '" + c + "'");
    pos++;
  }

  private char peek() {
    return pos < text.length() ? text.charAt(pos) : '\0';
  }

  private void skipSpace() {
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      pos++;
    }
  }

  private IllegalArgumentException error(String what) {
    int line = 1;
    int col = 1;
    for (int i = 0; i < Math.min(pos, text.length()); i++) {
      if (text.charAt(i) == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    return new IllegalArgumentException(what + " at line " + line + ", column " + col);
  }
}
