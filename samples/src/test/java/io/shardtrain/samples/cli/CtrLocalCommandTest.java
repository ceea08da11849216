package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CtrLocalCommandTest {
  @TempDir static Path dir;
  static Path smallCtr;

  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(exit, out.toString(), err.toString());
  }

  @BeforeAll
  static void writeConfig() throws Exception {
    // A small planted model that one epoch learns in about a second.
    smallCtr = dir.resolve("small-ctr.conf");
    Files.writeString(smallCtr, "shardtrain.train.ctr { examples = 40000, test-examples = 10000, fields = 8,"
        + " vocabulary = 100, hash-space = 4096, dense-dim = 4 }\n");
  }

  /**
   * The test AUC of the model saved in {@code model}, predicted as training does (rows the table
   * does not store start from their initial values): the saved model is the trained one.
   */
  private static double savedModelAuc(Path model, String json) throws Exception {
    var config = io.shardtrain.actors.config.ShardTrainConfig.load(smallCtr);
    var ctr = io.shardtrain.actors.config.CtrSettings.fromConfig(config);
    long seed = (long) field(json, "seed");
    var data = io.shardtrain.samples.local.CtrData.load("ctr", ctr, seed);
    var saved = io.shardtrain.persistence.model.ModelFiles.load(model);
    assertEquals("fm", saved.description().get("model"));
    var fm = new io.shardtrain.compute.nn.FactorizationMachine(data.train().fields(), data.train().denseDim(),
        ctr.factors());
    var table = io.shardtrain.samples.local.CtrTraining.table(fm, ctr, seed);
    var rows = saved.table("fm.rows");
    for (int r = 0; r < rows.rows(); r++) table.load(rows.ids()[r], rows.values(), r * rows.dim(), 0);
    return io.shardtrain.samples.local.CtrTraining.evaluate(fm, table, saved.parameter("fm.dense").values(), data.test(),
        ctr.aucBins()).auc();
  }

  private static double field(String json, String name) {
    Matcher m = Pattern.compile("\"" + name + "\": ([-0-9.eE]+)").matcher(json);
    assertTrue(m.find(), "report has no numeric field " + name + ":\n" + json);
    return Double.parseDouble(m.group(1));
  }

  @Test
  void ctrTrainsAFactorizationMachineWhoseHistogramAucIsExactAndNearTheOracle() throws Exception {
    Path report = dir.resolve("ctr.json");
    Run r = run("local", "--config", smallCtr.toString(), "--dataset", "ctr", "--batch", "256", "--epochs", "1",
        "--optimizer", "adagrad", "--lr", "0.05", "--lr-schedule", "constant", "--no-progress",
        "--report", report.toString(), "--save-model", dir.resolve("fm-single").toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    assertEquals(157, field(json, "steps")); // ceil(40000 / 256)
    assertEquals(field(json, "table_rows"),
        io.shardtrain.persistence.model.ModelFiles.load(dir.resolve("fm-single")).table("fm.rows").rows());
    assertEquals(field(json, "test_auc"), savedModelAuc(dir.resolve("fm-single"), json), 1e-9);
    double auc = field(json, "test_auc");
    double oracle = field(json, "oracle_auc");
    assertTrue(oracle > 0.7 && oracle < 0.95, json);
    assertTrue(auc > oracle - 0.05 && auc <= oracle + 0.01, "test_auc " + auc + ", oracle " + oracle);
    assertEquals(field(json, "test_auc_exact"), auc, 1e-3);
    assertTrue(r.out().contains("test_auc "), r.out());
    assertFalse(r.err().contains("share a row"), "8 x 100 values in 4096 rows are no crowd:\n" + r.err());
    List<String> csv = Files.readAllLines(dir.resolve("ctr.csv"));
    assertTrue(csv.get(0).endsWith(",test_accuracy,test_auc"), csv.get(0));
    String last = csv.get(csv.size() - 1);
    assertEquals(auc, Double.parseDouble(last.substring(last.lastIndexOf(',') + 1)), 1e-5);
  }

  @Test
  void anIdSpaceTheDataFillsMoreThanHalfOfIsWarnedOf() throws Exception {
    Path crowded = dir.resolve("crowded-ctr.conf");
    Files.writeString(crowded, Files.readString(smallCtr) + "shardtrain.train.ctr.hash-space = 512\n");
    Run r = run("local", "--config", crowded.toString(), "--dataset", "ctr", "--steps", "1", "--no-progress");
    assertEquals(0, r.exit(), r.err());
    // 8 fields of 100 values each, all drawn in 40,000 examples, hashed into 512 rows: 1 - e^(-800/512) of them used.
    Matcher m = Pattern.compile("shardtrain: warning: the training data's ids use (\\d+) of the id space's 512 rows"
        + " \\((\\d+)%\\), so many feature values share a row; a larger shardtrain.train.ctr.hash-space keeps them"
        + " apart").matcher(r.err());
    assertTrue(m.find(), r.err());
    int used = Integer.parseInt(m.group(1));
    assertTrue(used > 350 && used < 450, used + " rows used");
  }

  @Test
  void aCriteoLineWithTheWrongFieldCountFailsNamingFileAndLineBeforeAnyTraining() throws Exception {
    Path file = dir.resolve("day_0.tsv");
    StringBuilder good = new StringBuilder("1");
    for (int j = 0; j < 13; j++) good.append('\t').append(j % 3 == 0 ? "" : String.valueOf(j));
    for (int f = 0; f < 26; f++) good.append('\t').append(f % 5 == 0 ? "" : Integer.toHexString(f * 7919));
    Files.writeString(file, good + "\n" + good + "\n" + good + "\textra\n");
    Run r = run("local", "--dataset", "criteo:" + file, "--no-progress");
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains(file + ":3: 41 tab-separated fields, expected 40"), r.err());
    assertTrue(!r.err().contains("factorization machine"), "training started: " + r.err());
  }

  @Test
  void aCriteoFileWhoseTestLinesAreAllOneLabelIsRefusedBeforeTraining() throws Exception {
    StringBuilder line = new StringBuilder();
    for (int j = 0; j < 13; j++) line.append('\t').append(j);
    for (int f = 0; f < 26; f++) line.append('\t').append(Integer.toHexString(f * 7919));
    StringBuilder tsv = new StringBuilder();
    // 20 lines, clicks only among the first 18: the last 10% (2 lines) are all non-clicks.
    for (int i = 0; i < 20; i++) tsv.append(i < 18 && i % 3 == 0 ? '1' : '0').append(line).append('\n');
    Path file = dir.resolve("no-clicks-at-end.tsv");
    Files.writeString(file, tsv);
    Run r = run("local", "--dataset", "criteo:" + file, "--no-progress");
    assertEquals(2, r.exit(), r.err());
    assertEquals("shardtrain: error: " + file + ": its last 2 lines, the test set (shardtrain.train.ctr"
        + ".criteo-test-fraction 0.1), are all non-clicks, so their AUC is undefined; test on more lines or a file"
        + " whose end has both labels", r.err().strip());
    assertTrue(r.out().isEmpty(), "training started: " + r.out());
  }

  @Test
  void aCriteoFileTrainsOnItsFirstLinesAndTestsOnItsLast() throws Exception {
    // Clicks follow the first categorical value (4 values, click rates 0.1 to 0.8) and the first integer.
    java.util.Random r = new java.util.Random(3);
    StringBuilder tsv = new StringBuilder();
    String[] values = {"05db9164", "68fd1e64", "8cf07265", "be589b51"};
    double[] rate = {0.1, 0.3, 0.6, 0.8};
    for (int i = 0; i < 5000; i++) {
      int v = r.nextInt(4);
      int count = r.nextInt(50);
      double p = Math.min(0.95, rate[v] + (count > 25 ? 0.1 : 0));
      tsv.append(r.nextDouble() < p ? '1' : '0');
      for (int j = 0; j < 13; j++) tsv.append('\t').append(j == 0 ? String.valueOf(count) : j == 5 ? "" : "1");
      for (int f = 0; f < 26; f++) tsv.append('\t').append(f == 0 ? values[v] : f == 7 ? "" : Integer.toHexString(r.nextInt(1000)));
      tsv.append('\n');
    }
    Path file = dir.resolve("train.txt");
    Files.writeString(file, tsv);
    Path report = dir.resolve("criteo.json");
    Run run = run("local", "--dataset", "criteo:" + file, "--batch", "128", "--epochs", "2", "--optimizer", "adagrad",
        "--lr", "0.05", "--lr-schedule", "constant", "--no-progress", "--report", report.toString());
    assertEquals(0, run.exit(), run.err());
    String json = Files.readString(report);
    assertEquals(4500, field(json, "train_examples"));
    assertEquals(500, field(json, "test_examples"));
    assertTrue(json.contains("\"oracle_auc\": null"), json);
    // The four click rates separate clicks well above chance; the model finds them from 4,500 lines.
    assertTrue(field(json, "test_auc") > 0.68, json);
  }

  @Test
  void ctrOnTwoTrainersAndTwoPsNodesReportsTheMergedAucAndTheSparseBytesPerExample() throws Exception {
    Path report = dir.resolve("ctr-cluster.json");
    Run r = run("local", "--config", smallCtr.toString(), "--dataset", "ctr", "--batch", "256", "--epochs", "1",
        "--optimizer", "adagrad", "--lr", "0.05", "--lr-schedule", "constant", "--trainers", "2", "--ps", "2",
        "--journal", "memory", "--no-progress", "--report", report.toString(), "--save-model",
        dir.resolve("fm-cluster").toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    double auc = field(json, "test_auc");
    assertTrue(auc > field(json, "oracle_auc") - 0.06, json);
    // Both trainers' shares of the test set were predicted with the blocks and rows of the last step.
    assertEquals(auc, savedModelAuc(dir.resolve("fm-cluster"), json), 1e-6);
    assertEquals(10000, field(json, "test_auc_examples"), json);
    // Ids (8 bytes) and rows (1 + 8 factors, 4 bytes each) of at most 8 distinct rows per example.
    double pulled = field(json, "sparse_pull_bytes_per_example");
    assertTrue(pulled > 0 && pulled <= 8 * (8 + 4 * 9), json);
    assertTrue(r.out().contains("sparse bytes per example: pull "), r.out());
  }

  @Test
  void aJobInitialisedFromASavedModelStartsWhereItStoppedInOneProcessAndOnACluster() throws Exception {
    Path saved = dir.resolve("fm-to-start-from");
    String[] training = {"--config", smallCtr.toString(), "--dataset", "ctr", "--batch", "256", "--optimizer",
        "adagrad", "--lr", "0.05", "--lr-schedule", "constant", "--no-progress"};
    Run first = run(concat(new String[] {"local", "--epochs", "1", "--report", dir.resolve("first.json").toString(),
        "--save-model", saved.toString()}, training));
    assertEquals(0, first.exit(), first.err());
    double trained = field(Files.readString(dir.resolve("first.json")), "test_auc");
    Run fresh = run(concat(new String[] {"local", "--steps", "1", "--report", dir.resolve("fresh.json").toString()},
        training));
    assertEquals(0, fresh.exit(), fresh.err());
    double oneStep = field(Files.readString(dir.resolve("fresh.json")), "test_auc");
    assertTrue(trained > oneStep + 0.05, "one epoch " + trained + ", one step " + oneStep);
    // One more step from the saved model: its rows and dense part, where a fresh model's first step is at oneStep.
    Run single = run(concat(new String[] {"local", "--steps", "1", "--init-from", saved.toString(), "--report",
        dir.resolve("again.json").toString()}, training));
    assertEquals(0, single.exit(), single.err());
    String again = Files.readString(dir.resolve("again.json"));
    assertEquals(trained, field(again, "test_auc"), 0.01);
    assertTrue(again.contains("\"init_from\": \"" + saved.toAbsolutePath() + "\""), again);
    Run cluster = run(concat(new String[] {"local", "--steps", "1", "--init-from", saved.toString(), "--trainers", "2",
        "--ps", "2", "--journal", "memory", "--report", dir.resolve("again-cluster.json").toString()}, training));
    assertEquals(0, cluster.exit(), cluster.err());
    assertEquals(trained, field(Files.readString(dir.resolve("again-cluster.json")), "test_auc"), 0.01);
    Path fourFactors = dir.resolve("small-ctr-k4.conf");
    Files.writeString(fourFactors, Files.readString(smallCtr) + "shardtrain.train.ctr.factors = 4\n");
    String[] otherTraining = training.clone();
    otherTraining[1] = fourFactors.toString();
    Run otherShape = run(concat(new String[] {"local", "--steps", "1", "--init-from", saved.toString()}, otherTraining));
    assertEquals(2, otherShape.exit(), otherShape.err());
    assertTrue(otherShape.err().contains("cannot initialise from " + saved + ": its dense part has"), otherShape.err());
    // Refused before any data is read or generated.
    Run mlp = run("local", "--dataset", "mnist", "--data-dir", dir.resolve("no-data").toString(), "--init-from",
        saved.toString());
    assertEquals("shardtrain: error: cannot initialise from " + saved.toAbsolutePath().normalize() + ": it holds a"
        + " factorization machine (model \"fm\"), and --dataset mnist trains an MLP (model \"mlp\")", mlp.err().strip());
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    Run npyOnAFile = run(concat(new String[] {"local", "--steps", "1", "--export-npy", file.toString()}, training));
    assertEquals(2, npyOnAFile.exit(), npyOnAFile.err());
    assertTrue(!npyOnAFile.err().contains("factorization machine, k ="), "trained first:\n" + npyOnAFile.err());
  }

  private static String[] concat(String[]... parts) {
    return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
  }

  @Test
  void ctrInAllReduceModeIsRefusedBeforeAnyNodeStarts() {
    Run r = run("local", "--config", smallCtr.toString(), "--dataset", "ctr", "--trainers", "2", "--mode",
        "allreduce", "--no-progress");
    assertEquals(2, r.exit());
    assertTrue(r.err().contains("--mode allreduce trains MLPs"), r.err());
    assertTrue(!r.err().contains("local cluster"), "a node started: " + r.err());
  }
}
