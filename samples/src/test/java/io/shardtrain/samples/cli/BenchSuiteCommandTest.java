package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigSyntax;
import io.shardtrain.samples.report.SuiteReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchSuiteCommandTest {
  @TempDir static Path dir;

  record Run(int exit, String out, String err) {}

  @BeforeAll
  static void writeTinyDataSet() throws IOException {
    TinyDataSet.write(dir);
  }

  /**
   * The suite with every part small (20 training steps on the tiny data set, 4096-float parameters, no
   * GEMM warm-up: with any, each of its 7 products warms up for at least a second);
   * {@code extra}: flag and value pairs, replacing the small defaults they name.
   */
  static Run suite(Path out, String... extra) {
    Map<String, String> flags = new LinkedHashMap<>();
    String[] small = {"--out", out.toString(), "--dataset", "fashion-mnist", "--data-dir", dir.toString(),
        "--hidden", "16", "--optimizer", "adam", "--lr", "0.01", "--batch", "16", "--steps", "20",
        "--gemm-n", "32", "--gemm-warmup", "0", "--gemm-iterations", "3",
        "--ps-floats", "4096", "--ps-rounds", "3", "--ps-warmup", "3",
        "--recovery-floats", "4096", "--recovery-snapshot-every", "2"};
    for (int i = 0; i < small.length; i += 2) flags.put(small[i], small[i + 1]);
    for (int i = 0; i < extra.length; i += 2) flags.put(extra[i], extra[i + 1]);
    List<String> args = new ArrayList<>(List.of("bench", "suite", "--no-progress"));
    flags.forEach((k, v) -> {
      args.add(k);
      args.add(v);
    });
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(o, true), new PrintWriter(e, true), args.toArray(String[]::new));
    return new Run(exit, o.toString(), e.toString());
  }

  static Config json(Path file) {
    return ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setSyntax(ConfigSyntax.JSON));
  }

  /** The figures of a suite.json by name: value, and whether higher is better. */
  static Map<String, Config> figures(Path out) {
    Map<String, Config> m = new HashMap<>();
    for (Config f : json(out.resolve(SuiteReport.JSON)).getConfigList("figures")) m.put(f.getString("name"), f);
    return m;
  }

  private static final String SQUARE = "gemm square n=32";
  private static final String STEP = "gemm training step 784-16-10 batch 16";

  @Test
  void aTinySuiteWritesEveryFigureOfEveryPartToJsonAndMarkdownWithTheMachineAndParameters() throws IOException {
    Path out = dir.resolve("tiny");
    Run r = suite(out);
    assertEquals(0, r.exit(), r.out() + r.err());

    // name, unit, higher is better
    String[][] expected = {
        {SQUARE, "GFLOP/s", "true"},
        {STEP, "GFLOP/s", "true"},
        {"single samples/s", "samples/s", "true"},
        {"single test accuracy", "fraction", "true"},
        {"sync x2 samples/s", "samples/s", "true"},
        {"sync x2 samples/s ratio to single", "x single", "true"},
        {"sync x2 test accuracy", "fraction", "true"},
        {"sync x2 bytes sent per sample", "bytes", "false"},
        {"async x2 samples/s", "samples/s", "true"},
        {"async x2 samples/s ratio to single", "x single", "true"},
        {"async x2 test accuracy", "fraction", "true"},
        {"async x2 bytes sent per sample", "bytes", "false"},
        {"allreduce x2 samples/s", "samples/s", "true"},
        {"allreduce x2 samples/s ratio to single", "x single", "true"},
        {"allreduce x2 test accuracy", "fraction", "true"},
        {"allreduce x2 bytes sent per sample", "bytes", "false"},
        {"ps-bandwidth raw socket (4096 floats)", "GB/s", "true"},
        {"ps-bandwidth blocks over Artery (4096 floats)", "GB/s", "true"},
        {"ps-bandwidth blocks over the bulk channel (4096 floats)", "GB/s", "true"},
        {"recovery (4096 floats, snapshot every 2)", "s", "false"},
    };
    Config suite = json(out.resolve(SuiteReport.JSON));
    List<? extends Config> list = suite.getConfigList("figures");
    assertEquals(expected.length, list.size(), suite.root().render());
    String md = Files.readString(out.resolve(SuiteReport.MARKDOWN));
    for (int i = 0; i < expected.length; i++) {
      Config f = list.get(i);
      assertEquals(expected[i][0], f.getString("name"));
      assertEquals(expected[i][1], f.getString("unit"), expected[i][0]);
      assertEquals(Boolean.parseBoolean(expected[i][2]), f.getBoolean("higher_is_better"), expected[i][0]);
      assertEquals(expected[i][0].endsWith("accuracy") || expected[i][0].endsWith("bytes sent per sample"),
          f.getBoolean("seeded"), "the seeds set accuracy and bytes, not rates: " + expected[i][0]);
      double v = f.getDouble("value");
      assertTrue(v > 0 && Double.isFinite(v), expected[i][0] + " = " + v);
      Matcher row = Pattern.compile("\\| " + Pattern.quote(expected[i][0]) + " \\| ([0-9.]+) \\| "
          + Pattern.quote(expected[i][1]) + " \\((higher|lower) is better\\) \\|\n").matcher(md);
      assertTrue(row.find(), "no row " + expected[i][0] + " in\n" + md);
      assertEquals(v, Double.parseDouble(row.group(1)), Math.max(0.5, v * 1e-3), "the row shows the JSON's value");
      assertFalse(row.find(), "row " + expected[i][0] + " twice");
    }

    Map<String, Config> byName = figures(out);
    double single = byName.get("single samples/s").getDouble("value");
    for (String mode : new String[] {"sync", "async", "allreduce"}) {
      double rate = byName.get(mode + " x2 samples/s").getDouble("value");
      assertEquals(rate / single, byName.get(mode + " x2 samples/s ratio to single").getDouble("value"), 1e-9);
      // Trainer 2's node holds half the blocks: each of its steps sends at least half a gradient of the
      // 64-16-4 model (1108 floats) across for the 32 samples of both trainers' steps.
      assertTrue(byName.get(mode + " x2 bytes sent per sample").getDouble("value") > 1108 * 4 / 2 / 32.0, mode);
    }
    for (String acc : new String[] {"single", "sync x2", "async x2", "allreduce x2"}) {
      double a = byName.get(acc + " test accuracy").getDouble("value");
      assertTrue(a > 0.4 && a <= 1, "20 Adam steps learn the quadrants beyond chance (0.25): " + acc + " " + a);
    }

    Config machine = suite.getConfig("machine");
    assertEquals(Runtime.getRuntime().availableProcessors(), machine.getInt("cores"));
    assertFalse(machine.getString("cpu").isBlank());
    assertTrue(machine.getString("java").startsWith(System.getProperty("java.version")), machine.getString("java"));
    assertTrue(Instant.parse(machine.getString("date")).isAfter(Instant.now().minusSeconds(600)));
    Config p = suite.getConfig("parameters");
    assertEquals(20, p.getInt("steps"));
    assertEquals(2, p.getInt("trainers"));
    assertEquals(2, p.getInt("ps"), "the suite's distributed runs use 2 ps nodes unless --ps says otherwise");
    assertEquals("memory", p.getString("journal"));
    assertEquals(42, p.getLong("seed"));
    assertEquals(32, p.getInt("gemm_n"));
    assertEquals(4096, p.getInt("ps_floats"));
    assertFalse(suite.hasPath("baseline"), "no baseline, no comparison");
    assertTrue(md.contains("Machine: cores " + Runtime.getRuntime().availableProcessors()), md);
  }

  /** A hand-made suite.json with these figures (name, value). */
  private static Path baseline(String name, Object... figures) throws IOException {
    StringBuilder sb = new StringBuilder("{\"benchmark\": \"suite\", \"figures\": [");
    for (int i = 0; i < figures.length; i += 2) {
      if (i > 0) sb.append(", ");
      sb.append("{\"name\": \"").append(figures[i]).append("\", \"value\": ").append(figures[i + 1])
          .append(", \"unit\": \"GFLOP/s\", \"higher_is_better\": true}");
    }
    Path file = dir.resolve(name + ".json");
    Files.writeString(file, sb.append("]}").toString());
    return file;
  }

  @Test
  void aFigureFarWorseThanItsBaselineIsMarkedNamedAndFailsTheSuite() throws IOException {
    Path out = dir.resolve("regressed");
    Run r = suite(out, "--parts", "gemm", "--baseline", baseline("fast", SQUARE, 1e9, STEP, 0.001).toString(),
        "--tolerance", "20");
    assertEquals(BenchSuiteCommand.REGRESSION_EXIT, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("1 of 2 figure(s) regressed by more than 20.0% (seeded: "
        + BenchSuiteCommand.DEFAULT_SEEDED_TOLERANCE_PCT + "%): " + SQUARE + " (-100.0%)"), r.out());
    String md = Files.readString(out.resolve(SuiteReport.MARKDOWN));
    Matcher square = Pattern.compile("\\| " + Pattern.quote(SQUARE) + " \\| [0-9.]+ \\| [^|]+ \\| 1000000000 \\| "
        + "-100\\.0% \\| \\*\\*WORSE\\*\\* \\|").matcher(md);
    assertTrue(square.find(), md);
    Matcher step = Pattern.compile("\\| " + Pattern.quote(STEP) + " \\| [0-9.]+ \\| [^|]+ \\| 0\\.001000 \\| "
        + "\\+[0-9.]+% \\|  \\|").matcher(md);
    assertTrue(step.find(), "a figure better than its baseline is not marked:\n" + md);
    assertTrue(md.contains("**1 figure regressed**: " + SQUARE + "."), md);
    Config suite = json(out.resolve(SuiteReport.JSON));
    assertEquals(1, suite.getInt("baseline.regressions"));
    assertEquals(List.of(SQUARE), suite.getStringList("baseline.regressed"));
    assertEquals(20.0, suite.getDouble("baseline.tolerance_pct"));
    Map<String, Config> byName = figures(out);
    assertTrue(byName.get(SQUARE).getBoolean("baseline.regressed"));
    assertEquals(1e9, byName.get(SQUARE).getDouble("baseline.value"));
    assertFalse(byName.get(STEP).getBoolean("baseline.regressed"));
  }

  @Test
  void figuresNoWorseThanTheBaselinePassAndFiguresTheBaselineLacksAreNew() throws IOException {
    Path out = dir.resolve("passes");
    Run r = suite(out, "--parts", "gemm", "--baseline",
        baseline("slow", SQUARE, 0.001, "gemm square n=4096", 500).toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("0 of 2 figure(s) regressed by more than "
        + BenchSuiteCommand.DEFAULT_TOLERANCE_PCT + "%"), "the default tolerance applies: " + r.out());
    String md = Files.readString(out.resolve(SuiteReport.MARKDOWN));
    assertTrue(md.contains("No figure regressed."), md);
    assertFalse(md.contains(SuiteReport.WORSE + " |"), md);
    assertTrue(Pattern.compile("\\| " + Pattern.quote(STEP) + " \\| [0-9.]+ \\| [^|]+ \\| \\| \\| new \\|").matcher(md)
        .find(), md);
    assertTrue(md.contains("In the baseline but not measured by this run: gemm square n=4096."), md);
    Map<String, Config> byName = figures(out);
    assertFalse(byName.get(STEP).getBoolean("baseline.found"));
    assertTrue(byName.get(SQUARE).getDouble("baseline.change_pct") > 0);
    assertEquals(List.of("gemm square n=4096"), json(out.resolve(SuiteReport.JSON)).getStringList("baseline.missing"));
    assertFalse(r.err().contains("other parameters"), "the hand-made baseline names no parameters: " + r.err());
  }

  @Test
  void aBaselineRunWithOtherParametersIsNamedBeforeTheComparison() throws IOException {
    Path old = dir.resolve("other-parameters.json");
    Files.writeString(old, "{\"parameters\": {\"parts\": \"gemm\", \"gemm_n\": 1024, \"gemm_iterations\": 3}, "
        + "\"figures\": [{\"name\": \"gemm square n=1024\", \"value\": 0.001}]}");
    Run r = suite(dir.resolve("other"), "--parts", "gemm", "--baseline", old.toString());
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("shardtrain: the baseline ran with other parameters: gemm_n 32 (baseline 1024)\n"),
        r.err());
  }

  @Test
  void aMalformedOrMissingBaselineOrABadFlagIsAOneLineErrorBeforeAnythingRuns() throws IOException {
    Path notJson = dir.resolve("not-json.json");
    Files.writeString(notJson, "{\"figures\": [");
    Path noFigures = dir.resolve("no-figures.json");
    Files.writeString(noFigures, "{\"runs\": []}");
    Path textValue = dir.resolve("text-value.json");
    Files.writeString(textValue, "{\"figures\": [{\"name\": \"x\", \"value\": \"fast\"}]}");
    Path empty = dir.resolve("empty.json");
    Files.writeString(empty, "{\"figures\": []}");
    String[][] cases = {
        {"--baseline", notJson.toString(), "baseline " + notJson + " is not a bench suite's suite.json"},
        {"--baseline", noFigures.toString(), "baseline " + noFigures + " is not a bench suite's suite.json"},
        {"--baseline", textValue.toString(), "baseline " + textValue + " is not a bench suite's suite.json"},
        {"--baseline", empty.toString(), "baseline " + empty + " has no figures"},
        {"--baseline", dir.resolve("missing.json").toString(), "missing.json (the --baseline suite.json)"},
        {"--tolerance", "5", "--tolerance applies to a comparison with a --baseline suite.json; none given"},
        {"--seeded-tolerance", "2", "--seeded-tolerance applies to a comparison with a --baseline suite.json; none given"},
        {"--seeded-tolerance", "-1", "--seeded-tolerance must be a percentage of at least 0, got -1.0"},
        {"--parts", "gemm,fft", "--parts: unknown part 'fft' (available: gemm, training, ps-bandwidth, recovery)"},
        {"--parts", "gemm,", "--parts has an empty entry in 'gemm,'"},
        {"--steps", "0", "--steps must be at least 1, got 0"},
        {"--gemm-n", "0", "--gemm-n must be at least 1, got 0"},
        {"--trainers", "0", "--trainers must be at least 1, got 0"},
        {"--ps-floats", "-1", "--ps-floats must be at least 1, got -1"},
        {"--gemm-iterations", "many", "Invalid value for option '--gemm-iterations': 'many' is not an int"},
    };
    for (String[] c : cases) {
      Path out = dir.resolve("bad");
      long start = System.nanoTime();
      Run r = suite(out, c[0], c[1]);
      assertEquals(2, r.exit(), String.join(" ", c) + ": " + r.out() + r.err());
      assertTrue(r.err().contains(c[2]), String.join(" ", c) + ": " + r.err());
      assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
      assertFalse(Files.exists(out), "nothing ran for " + String.join(" ", c));
      assertTrue(r.out().isEmpty(), "no part printed a figure: " + r.out());
      assertTrue(System.nanoTime() - start < 5_000_000_000L, "refused at once: " + String.join(" ", c));
    }
    Run r = suite(dir.resolve("bad"), "--baseline", noFigures.toString(), "--tolerance", "-3");
    assertEquals(2, r.exit());
    assertTrue(r.err().contains("--tolerance must be a percentage of at least 0, got -3.0"), r.err());

    Path inTheWay = dir.resolve("a-file");
    Files.writeString(inTheWay, "not a folder\n");
    Run blocked = suite(inTheWay.resolve("out"), "--parts", "gemm");
    assertEquals(2, blocked.exit(), blocked.out() + blocked.err());
    assertTrue(blocked.err().contains(inTheWay.toString()), blocked.err());
    assertTrue(blocked.out().isEmpty(), "a part ran before the report's folder was refused: " + blocked.out());
  }

  @Test
  void spreadPrintsEachFiguresSpreadOverTheRunsAndTheWidest() throws IOException {
    Path a = baseline("spread-a", SQUARE, 80, STEP, 10);
    Path b = baseline("spread-b", SQUARE, 100, STEP, 10.5);
    Path c = baseline("spread-c", SQUARE, 120, STEP, 10);
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(o, true), new PrintWriter(e, true), "bench", "spread",
        a.toString(), b.toString(), c.toString());
    assertEquals(0, exit, e.toString());
    assertTrue(o.toString().contains("| " + SQUARE + " | GFLOP/s | 3 | 80.0 | 100 | 120 | 40.0% | -33.3% |"), o.toString());
    assertTrue(o.toString().contains("| " + STEP + " | GFLOP/s | 3 | 10.0 | 10.0 | 10.5 | 5.0% | -4.8% |"), o.toString());
    assertTrue(o.toString().contains("widest spread: " + SQUARE + ", 40.0% over 3 runs"), o.toString());
    assertTrue(o.toString().contains("worst change between two runs: " + SQUARE + ", 33.3% worse"), o.toString());
    o.getBuffer().setLength(0);
    e.getBuffer().setLength(0);
    assertEquals(2, ShardTrainCli.execute(new PrintWriter(o, true), new PrintWriter(e, true), "bench", "spread",
        a.toString()), "one run has no spread");
    // A bad file is named as a run of the spread, not as a suite's --baseline.
    Path notSuite = dir.resolve("not-a-suite.json");
    Files.writeString(notSuite, "{\"runs\": []}");
    Path missing = dir.resolve("missing-run.json");
    for (Path bad : List.of(notSuite, missing)) {
      e.getBuffer().setLength(0);
      assertEquals(2, ShardTrainCli.execute(new PrintWriter(o, true), new PrintWriter(e, true), "bench", "spread",
          a.toString(), bad.toString()));
      String expected = bad == missing
          ? "shardtrain: error: no such file or directory: " + missing + " (a SUITE_JSON of bench spread)"
          : "shardtrain: error: run " + notSuite + " is not a bench suite's suite.json: ";
      assertTrue(e.toString().startsWith(expected), e.toString());
    }
  }
}
