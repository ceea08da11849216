package io.shardtrain.samples.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Prometheus' text exposition format (version 0.0.4), read strictly: every line is a
 * {@code # HELP}, a {@code # TYPE} or a sample {@code name{label="value",...} value}, and every
 * sample belongs to the family a {@code # TYPE} line declared before it.
 */
record PrometheusText(Map<String, Double> samples, Map<String, String> types) {
  private static final String NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  private static final String LABEL = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
  private static final Pattern SAMPLE = Pattern.compile("(" + NAME + ")(\\{(?:" + LABEL + ")(?:," + LABEL + ")*,?})?"
      + " (\\S+)(?: -?\\d+)?");
  private static final Pattern TYPE = Pattern.compile("# TYPE (" + NAME + ") (counter|gauge|summary|histogram|untyped)");
  private static final Pattern HELP = Pattern.compile("# HELP (" + NAME + ") .*");
  private static final List<String> SUFFIXES = List.of("", "_total", "_count", "_sum", "_max", "_bucket", "_created");

  /** Parses {@code text}; an {@link IllegalArgumentException} names the first line that is not the format. */
  static PrometheusText parse(String text) {
    Map<String, Double> samples = new LinkedHashMap<>();
    Map<String, String> types = new LinkedHashMap<>();
    int n = 0;
    for (String line : text.split("\n", -1)) {
      n++;
      if (line.isEmpty()) continue;
      Matcher t = TYPE.matcher(line);
      if (t.matches()) {
        types.put(t.group(1), t.group(2));
        continue;
      }
      if (HELP.matcher(line).matches()) continue;
      Matcher s = SAMPLE.matcher(line);
      if (!s.matches()) throw new IllegalArgumentException("line " + n + " is not Prometheus text: " + line);
      if (family(s.group(1), types) == null) {
        throw new IllegalArgumentException("line " + n + ": sample of no declared family: " + line);
      }
      String key = s.group(1) + (s.group(2) == null ? "" : s.group(2));
      if (samples.put(key, value(s.group(3))) != null) {
        throw new IllegalArgumentException("line " + n + ": series " + key + " appears twice");
      }
    }
    return new PrometheusText(samples, types);
  }

  private static String family(String sample, Map<String, String> types) {
    for (String suffix : SUFFIXES) {
      if (sample.endsWith(suffix) && types.containsKey(sample.substring(0, sample.length() - suffix.length()))) {
        return sample.substring(0, sample.length() - suffix.length());
      }
    }
    return null;
  }

  private static double value(String v) {
    switch (v) {
      case "+Inf":
        return Double.POSITIVE_INFINITY;
      case "-Inf":
        return Double.NEGATIVE_INFINITY;
      default:
        return Double.parseDouble(v);
    }
  }

  /** The names of the samples, without labels. */
  List<String> names() {
    List<String> names = new ArrayList<>();
    for (String key : samples.keySet()) {
      String name = key.contains("{") ? key.substring(0, key.indexOf('{')) : key;
      if (!names.contains(name)) names.add(name);
    }
    return names;
  }

  /** The sum over the series of {@code name} whose labels include every one of {@code labels} ({@code k="v"}). */
  double sum(String name, String... labels) {
    double total = 0;
    for (Map.Entry<String, Double> e : samples.entrySet()) {
      String key = e.getKey();
      if (!key.equals(name) && !key.startsWith(name + "{")) continue;
      boolean all = true;
      for (String l : labels) all &= key.contains("{" + l + ",") || key.contains("," + l + ",")
          || key.contains("," + l + "}") || key.contains("{" + l + "}");
      if (all) total += e.getValue();
    }
    return total;
  }

  /** How many series of {@code name} there are. */
  long series(String name) {
    return samples.keySet().stream().filter(k -> k.equals(name) || k.startsWith(name + "{")).count();
  }
}
