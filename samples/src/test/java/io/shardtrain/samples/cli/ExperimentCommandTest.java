package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigSyntax;
import io.shardtrain.samples.report.ExperimentReport;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExperimentCommandTest {
  @TempDir static Path dataDir;

  record Run(int exit, String out, String err) {}

  @BeforeAll
  static void writeTinyDataSet() throws IOException {
    TinyDataSet.write(dataDir);
  }

  /** An experiment on the tiny data set with {@code extra} flags; 40 steps a run, an evaluation every 10. */
  static Run experiment(Path out, String... extra) {
    return experiment(out, 40, extra);
  }

  static Run experiment(Path out, int steps, String... extra) {
    List<String> args = new java.util.ArrayList<>(List.of("experiment", "--dataset", "fashion-mnist",
        "--data-dir", dataDir.toString(), "--hidden", "16", "--optimizer", "adam", "--lr", "0.01", "--batch", "16",
        "--steps", String.valueOf(steps), "--eval-every", "10", "--seed", "3", "--journal", "memory",
        "--no-progress", "--out", out.toString()));
    args.addAll(Arrays.asList(extra));
    StringWriter o = new StringWriter();
    StringWriter e = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(o, true), new PrintWriter(e, true), args.toArray(String[]::new));
    return new Run(exit, o.toString(), e.toString());
  }

  static Config json(Path file) {
    return ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setSyntax(ConfigSyntax.JSON));
  }

  @Test
  void aMatrixRunsTheSingleProcessThenEveryModeWithEveryTrainerCountAndReportsEachInTableJsonAndCharts()
      throws IOException {
    Path out = dataDir.resolve("matrix");
    Run r = experiment(out, "--modes", "single,sync,async", "--trainers", "1,2", "--target-accuracy", "0.9");
    assertEquals(0, r.exit(), r.err());

    String[][] rows = {{"single", "1", "0"}, {"sync", "1", "1"}, {"sync", "2", "1"}, {"async", "1", "1"},
        {"async", "2", "1"}};
    String md = Files.readString(out.resolve(ExperimentReport.MARKDOWN));
    String number = "\\s*([0-9.]+)\\s*";
    for (String[] row : rows) {
      // mode | trainers | ps | samples/s | ratio | time to target | accuracy | loss | bytes per sample
      Matcher m = Pattern.compile("\\| " + row[0] + " \\| " + row[1] + " \\| " + row[2] + " \\|" + number + "\\|"
          + number + "\\|\\s*([0-9.]+|not reached)\\s*\\|" + number + "\\|" + number + "\\|" + number + "\\|")
          .matcher(md);
      assertTrue(m.find(), "no row " + String.join(" ", row) + " in\n" + md);
      assertTrue(Double.parseDouble(m.group(1)) > 0, "samples/s of " + m.group());
      assertTrue(Double.parseDouble(m.group(4)) > 0.5, "40 steps learn the quadrants: " + m.group());
      if (row[0].equals("single")) {
        assertEquals("1.00", m.group(2), "the single process is the ratio's base");
        assertEquals("0", m.group(6), "a single process sends nothing");
      }
      assertFalse(m.find(), "row " + String.join(" ", row) + " twice in\n" + md);
    }
    for (String chart : new String[] {ExperimentReport.ACCURACY_CHART, ExperimentReport.THROUGHPUT_CHART,
        ExperimentReport.LOSS_CHART}) {
      assertTrue(md.contains("](" + chart + ")"), "report.md links no " + chart);
      Path png = out.resolve(chart);
      byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
      assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, chart + " is no PNG");
      BufferedImage image = ImageIO.read(png.toFile());
      assertNotNull(image, chart + " does not decode");
      assertEquals(900, image.getWidth());
      assertEquals(500, image.getHeight());
    }

    List<? extends Config> runs = json(out.resolve(ExperimentReport.JSON)).getConfigList("runs");
    assertEquals(rows.length, runs.size(), "one result per run");
    for (int i = 0; i < rows.length; i++) {
      Config run = runs.get(i);
      assertEquals(rows[i][0], run.getString("mode"));
      assertEquals(Integer.parseInt(rows[i][1]), run.getInt("trainers"));
      assertEquals(Integer.parseInt(rows[i][2]), run.getInt("ps"));
      assertEquals(40, run.getLong("steps"), "--steps is per trainer");
      assertEquals(40L * 16 * run.getInt("trainers"), run.getLong("samples"));
      assertTrue(run.getDouble("samples_per_sec") > 0);
      assertTrue(run.getDouble("samples_per_sec_second_half") > 0);
      assertTrue(run.getConfigList("evaluations").size() >= 2, "evaluations while training: " + run.root().render());
      assertTrue(run.getList("loss_by_trainer_steps").size() >= 4, "a loss every 10 trainer steps");
      if (run.getInt("trainers") == 2) {
        // Trainer 2 has no block on its node: each of its steps sends at least its gradient (1108 fp32
        // values of the 64-16-4 model) across, and both trainers' steps hold 32 samples.
        assertTrue(run.getDouble("bytes_per_sample") > 1108 * 4 / 32.0, run.root().render());
      }
    }
    assertEquals(1.0, runs.get(0).getDouble("ratio_to_single"));
    assertEquals(0, runs.get(0).getLong("bytes_sent"));
    for (String file : new String[] {"single-1.csv", "sync-1.csv", "sync-2.csv", "async-1.csv", "async-2.csv"}) {
      assertTrue(Files.size(out.resolve("runs").resolve(file)) > 0, file);
    }
  }

  /** A results.json of one single-process run with these figures. */
  private static Path baseline(String name, double samplesPerSec, double accuracy) throws IOException {
    Path file = dataDir.resolve(name + ".json");
    Files.writeString(file, "{\"runs\": [{\"mode\": \"single\", \"trainers\": 1, \"ps\": 0, \"samples_per_sec\": "
        + samplesPerSec + ", \"test_accuracy\": " + accuracy + "}]}");
    return file;
  }

  @Test
  void aRunSlowerThanItsBaselineRowIsMarkedAndFailsTheExperimentWithFailOnRegression() throws IOException {
    Path out = dataDir.resolve("regressed");
    Path old = baseline("fast", 1e12, 0.5);
    Run r = experiment(out, "--modes", "single", "--trainers", "1", "--baseline", old.toString(),
        "--fail-on-regression", "20");
    assertEquals(ExperimentCommand.REGRESSION_EXIT, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("1 regression(s)"), r.out());
    String md = Files.readString(out.resolve(ExperimentReport.MARKDOWN));
    assertTrue(md.contains("| **REGRESSION**: samples/s -100.0%"), md);
    assertTrue(md.contains("**1 regression**"), md);
    Config run = json(out.resolve(ExperimentReport.JSON)).getConfigList("runs").get(0);
    assertTrue(run.getBoolean("baseline.regressed"));
    assertEquals(1e12, run.getDouble("baseline.samples_per_sec"));
    assertTrue(run.getDouble("baseline.samples_per_sec_change_pct") < -99.9);
    assertEquals(1, json(out.resolve(ExperimentReport.JSON)).getInt("baseline.regressions"));
  }

  @Test
  void aRunLessAccurateThanTheToleranceIsARegressionAndWithoutFailOnRegressionOnlyMarked() throws IOException {
    Path out = dataDir.resolve("less-accurate");
    // Two steps leave the model far from the baseline's accuracy.
    Run r = experiment(out, 2, "--modes", "single", "--trainers", "1", "--baseline",
        baseline("accurate", 1, 0.99).toString(), "--accuracy-tolerance", "0.001");
    assertEquals(0, r.exit(), "marked, not failed: " + r.out() + r.err());
    Config run = json(out.resolve(ExperimentReport.JSON)).getConfigList("runs").get(0);
    assertTrue(run.getBoolean("baseline.regressed"), run.root().render());
    assertTrue(run.getDouble("baseline.samples_per_sec_change_pct") > 0, "faster than 1 sample/s");
    assertTrue(run.getStringList("baseline.regressions").get(0).startsWith("accuracy "), run.root().render());
  }

  @Test
  void aRunAsFastAndAccurateAsItsBaselinePasses() throws IOException {
    Path out = dataDir.resolve("passes");
    Run r = experiment(out, "--modes", "single", "--trainers", "1", "--baseline",
        baseline("slow", 1, 0.25).toString(), "--fail-on-regression", "0");
    assertEquals(0, r.exit(), r.out() + r.err());
    assertTrue(r.out().contains("0 regression(s)"), r.out());
    assertTrue(Files.readString(out.resolve(ExperimentReport.MARKDOWN)).contains("No regression."));
  }

  @Test
  void badMatrixInputIsAOneLineErrorNamingIt() throws IOException {
    String[][] cases = {
        {"--modes", "sync,ring", "unknown mode 'ring' (available: single, allreduce, async, sync)"},
        {"--modes", "", "--modes has an empty entry in ''"},
        {"--trainers", "1,0", "--trainers: each count must be at least 1, got 0"},
        {"--trainers", "1,,2", "--trainers has an empty entry in '1,,2'"},
        {"--trainers", "two", "--trainers: 'two' is not a whole number"},
        {"--fail-on-regression", "5", "--fail-on-regression compares with a --baseline results.json; none given"},
        {"--target-accuracy", "95", "--target-accuracy must be in (0, 1], got 95.0"},
        {"--baseline", dataDir.resolve("missing.json").toString(), "missing.json (the --baseline results.json)"},
    };
    for (String[] c : cases) {
      Path out = dataDir.resolve("bad");
      Run r = experiment(out, c[0], c[1]);
      assertEquals(2, r.exit(), String.join(" ", c) + ": " + r.err());
      assertTrue(r.err().contains(c[2]), String.join(" ", c) + ": " + r.err());
      assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
      assertFalse(Files.exists(out), "nothing ran for " + String.join(" ", c));
    }
    Path ctrOut = dataDir.resolve("ctr-experiment");
    ShardTrainCliTest.Run ctr = ShardTrainCliTest.run("experiment", "--dataset", "ctr", "--modes", "sync",
        "--trainers", "1", "--steps", "5", "--no-progress", "--out", ctrOut.toString());
    assertEquals(2, ctr.exit(), ctr.err());
    assertTrue(ctr.err().contains("dataset 'ctr' trains a factorization machine (local, submit, node); this command"
        + " trains an MLP, on mnist or fashion-mnist"), ctr.err());
    assertFalse(Files.exists(ctrOut), "nothing ran for --dataset ctr");
    Path notResults = dataDir.resolve("not-results.json");
    Files.writeString(notResults, "{\"samples_per_sec\": 3}");
    Run r = experiment(dataDir.resolve("bad"), "--baseline", notResults.toString());
    assertEquals(2, r.exit());
    assertTrue(r.err().contains("is not an experiment's results.json"), r.err());
  }
}
