package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.actors.ShardTrain;
import io.shardtrain.samples.testing.FreePorts;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShardTrainCliTest {
  @TempDir static Path dataDir;

  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(exit, out.toString(), err.toString());
  }

  @BeforeAll
  static void writeTinyDataSet() throws IOException {
    TinyDataSet.write(dataDir);
  }

  private static double field(String json, String name) {
    Matcher m = Pattern.compile("\"" + name + "\": ([-0-9.eE]+)").matcher(json);
    assertTrue(m.find(), "report has no numeric field " + name + ":\n" + json);
    return Double.parseDouble(m.group(1));
  }

  @Test
  void theKernelsWarmUpEarlyOnlyForADenseModelTrainedOnTheCpuHere() {
    assertTrue(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"local", "--dataset", "mnist", "--steps", "10"}));
    assertTrue(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"experiment", "--modes", "sync,allreduce"}));
    assertTrue(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"local", "--backend=cpu"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"local", "--backend", "cuda"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"local", "--dataset=ctr"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"local", "--dataset", "criteo:/data/day_0"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"node", "--roles", "ps,trainer"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {"status"}));
    assertFalse(ShardTrainCli.trainsDenseModelOnCpu(new String[] {}));
  }

  @Test
  void helpListsTheCommands() {
    Run r = run("--help");
    assertEquals(0, r.exit());
    assertTrue(r.out().contains("local"), r.out());
    assertTrue(r.out().contains("bench"), r.out());
    Run local = run("local", "--help");
    assertEquals(0, local.exit());
    assertTrue(local.out().contains("--compute-threads"), local.out());
    // The defaults shown are reference.conf's, not picocli's null.
    String flat = local.out().replaceAll("\\s+", " ");
    assertTrue(flat.contains("factorization machine (default: mnist)"), flat);
    assertTrue(flat.contains("sync, async or allreduce (default: sync)"), flat);
    assertTrue(flat.contains("Examples per batch, per trainer (default: 64)"), flat);
    assertTrue(!flat.contains("null"), flat);
  }

  @Test
  void benchGemmMeasuresForTheMinimumTimeBeyondTheCountAndRefusesANegativeTime() throws IOException {
    Path report = dataDir.resolve("out/gemm.json");
    // After the warm-up (a second at least), a run of 2e7 flops takes milliseconds, and 0.1 s on a
    // host busy enough to make the product 10 times slower (seen in CI): even then over 3 fit in 1.5 s.
    Run r = run("bench", "gemm", "--shapes", "16x8x24:tn", "--warmup", "1", "--iterations", "3",
        "--min-seconds", "1.5", "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    assertEquals(3, field(json, "iterations"), "the requested count: " + json);
    Matcher counts = Pattern.compile("\"measured_iterations\": (\\d+)").matcher(json);
    assertTrue(counts.find(), json);
    assertTrue(Integer.parseInt(counts.group(1)) > 3, "measured beyond 3 runs: " + json);
    assertEquals(1.5, field(json, "min_seconds"), 1e-9);
    Run bad = run("bench", "gemm", "--n", "8", "--min-seconds", "-1");
    assertTrue(bad.exit() != 0, bad.out());
    assertTrue(bad.err().contains("--min-seconds must be a number of seconds >= 0, got -1.0"), bad.err());
  }

  @Test
  void benchmarksRefuseOutOfRangeCountsNamingTheFlag() {
    String[][] cases = {
        {"transport --in-flight 0", "--in-flight must be at least 1, got 0"},
        {"ps-bandwidth --block 0", "--block must be at least 1, got 0"},
        {"ps-bandwidth --block 2000000", "--block must be at most 1048576, got 2000000"},
        {"ps-bandwidth --warmup -1", "--warmup must be at least 0, got -1"},
        {"recovery --floats 8,0", "--floats must be at least 1, got 0"},
        {"recovery --snapshot-every 0", "--snapshot-every must be at least 1, got 0"},
        {"sparse-memory --dim 0", "--dim must be at least 1, got 0"},
        {"sparse-recovery --extra -1", "--extra must be at least 0, got -1"},
        {"load --clients 0", "--clients must be at least 1, got 0"},
        {"gemm --warmup -1", "--warmup must be at least 0, got -1"},
        {"grpc-bandwidth --block 2000000", "--block must be at most 1048576, got 2000000"},
        {"grpc-bandwidth --rounds 0", "--rounds must be at least 1, got 0"},
    };
    for (String[] c : cases) {
      Run r = run(("bench " + c[0]).split(" "));
      assertEquals(2, r.exit(), c[0] + ": " + r.out() + r.err());
      assertEquals("shardtrain: error: " + c[1], r.err().strip(), c[0]);
    }
  }

  @Test
  void localTrainingWritesAReportWithTheAgreedFields() throws IOException {
    Path report = dataDir.resolve("out/report.json");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--hidden", "32", "--optimizer", "adam", "--lr", "0.01", "--batch", "32", "--epochs", "3",
        "--seed", "3", "--no-progress", "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    for (String f : new String[] {"mode", "trainers", "epochs", "steps", "batch", "samples_per_sec",
        "wall_seconds", "test_accuracy", "final_loss"}) {
      assertTrue(json.contains("\"" + f + "\""), "missing " + f + " in\n" + json);
    }
    assertTrue(json.contains("\"mode\": \"single\""), json);
    assertTrue(json.contains("\"activation\": \"relu\"") && json.contains("\"lr_schedule\": \"cosine\""), json);
    assertTrue(json.contains("\"init\": \"auto\""), json);
    assertEquals(0.0, field(json, "weight_decay"));
    assertEquals(3, field(json, "epochs"));
    assertEquals(48, field(json, "steps")); // 512 / 32 = 16 steps per epoch
    assertTrue(field(json, "samples_per_sec") > 0);
    // HotSpot counts compile time, so the field is a number (null would say it does not).
    assertTrue(field(json, "jit_compile_seconds") >= 0, json);
    // Numbers, not null. The process's CPU clock counts 10 ms ticks, which 48 small steps may not
    // fill; the compiler threads' share of it is part of it, to within a tick.
    assertTrue(field(json, "process_cpu_seconds") >= 0, json);
    if (java.nio.file.Files.isDirectory(Path.of("/proc/self/task"))) {
      assertTrue(field(json, "jit_cpu_seconds") >= 0, json);
      assertTrue(field(json, "jit_cpu_seconds") <= field(json, "process_cpu_seconds") + 0.01, json);
    }
    // Quadrant blobs are easy: chance is 25%.
    assertTrue(field(json, "test_accuracy") > 0.9, json);
  }

  @Test
  void savedModelInitialisesANewJobAndExportsNpy() throws IOException {
    Path model = dataDir.resolve("saved-model");
    Path npy = dataDir.resolve("saved-npy");
    Run first = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "32",
        "--optimizer", "adam", "--lr", "0.01", "--batch", "32", "--epochs", "3", "--no-progress",
        "--save-model", model.toString(), "--export-npy", npy.toString());
    assertEquals(0, first.exit(), first.err());
    assertTrue(Files.isRegularFile(model.resolve("manifest.json")));
    try (var files = Files.list(npy)) {
      assertEquals(4, files.filter(f -> f.toString().endsWith(".npy")).count()); // 2 weights, 2 biases
    }
    // One step at a negligible rate from the saved model: the accuracy is the trained one, not chance.
    Path report = dataDir.resolve("from-saved.json");
    Run second = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "32",
        "--optimizer", "sgd", "--lr", "1e-9", "--steps", "1", "--no-progress", "--init-from", model.toString(),
        "--report", report.toString());
    assertEquals(0, second.exit(), second.err());
    assertTrue(field(Files.readString(report), "test_accuracy") > 0.9, Files.readString(report));
    // A model of another shape is refused, naming both shapes.
    Run wrong = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "16",
        "--steps", "1", "--no-progress", "--init-from", model.toString());
    assertEquals(2, wrong.exit());
    assertTrue(wrong.err().contains("[64, 16]") && wrong.err().contains("[64, 32]"), wrong.err());
    assertTrue(wrong.err().contains("cannot initialise from " + model) && wrong.err().contains("(it was saved with"
        + " hidden layers [32])"), wrong.err());
  }

  @Test
  void aModelSavedByOneClusterInitialisesAJobOnAnotherNumberOfPsNodesAndAnotherBlockSize() throws IOException {
    Path model = dataDir.resolve("saved-by-cluster");
    Path first = dataDir.resolve("cluster-first.json");
    Run trained = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "32",
        "--optimizer", "adam", "--lr", "0.01", "--batch", "32", "--epochs", "3", "--no-progress", "--trainers", "2",
        "--ps", "1", "--block-size", "100000", "--journal", "memory", "--save-model", model.toString(),
        "--report", first.toString());
    assertEquals(0, trained.exit(), trained.err());
    double accuracy = field(Files.readString(first), "test_accuracy");
    assertTrue(accuracy > 0.9, Files.readString(first));
    // Saved from whole blocks of one ps node; read into blocks of 300 floats over two: every
    // parameter (64 x 32 and its bias, 32 x 4 and its bias) lands where it was.
    Path second = dataDir.resolve("cluster-second.json");
    Run resumed = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "32",
        "--optimizer", "sgd", "--lr", "1e-9", "--steps", "1", "--no-progress", "--trainers", "2", "--ps", "2",
        "--block-size", "300", "--journal", "memory", "--init-from", model.toString(), "--report", second.toString());
    assertEquals(0, resumed.exit(), resumed.err());
    String json = Files.readString(second);
    assertTrue(field(json, "blocks") >= 9, "64x32 in blocks of 300 alone makes 7: " + json);
    assertEquals(accuracy, field(json, "test_accuracy"), 0.005, json);
  }

  @Test
  void aModelStartedAsPytorchsLinearLayersSaysSoInItsReportAndSavedModel() throws IOException {
    Path report = dataDir.resolve("torch-init.json");
    Path model = dataDir.resolve("torch-init-model");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "32",
        "--init", "pytorch", "--optimizer", "sgd", "--lr", "0.05", "--batch", "32", "--epochs", "3", "--no-progress",
        "--report", report.toString(), "--save-model", model.toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    assertTrue(json.contains("\"init\": \"pytorch\""), json);
    assertTrue(field(json, "test_accuracy") > 0.9, json);
    String manifest = Files.readString(model.resolve("manifest.json"));
    assertTrue(manifest.contains("\"init\" : \"pytorch\"") || manifest.contains("\"init\": \"pytorch\""), manifest);
    Run wrong = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--init", "xavier",
        "--steps", "1", "--no-progress");
    assertEquals(2, wrong.exit());
    assertEquals("shardtrain: error: unknown init 'xavier': expected auto or pytorch", wrong.err().strip());
  }

  @Test
  void stepsReplaceEpochs() throws IOException {
    Path report = dataDir.resolve("steps.json");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--hidden", "16", "--batch", "10", "--steps", "7", "--no-progress", "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    assertEquals(7, field(Files.readString(report), "steps"));
  }

  @Test
  void theTrainerCountOfAConfigFileStartsThatManyTrainersAndTheFlagOverridesIt() throws IOException {
    Path conf = dataDir.resolve("two-trainers.conf");
    Files.writeString(conf, "shardtrain.train { trainers = 2, mode = async }\n");
    String[] job = {"local", "--config", conf.toString(), "--dataset", "fashion-mnist", "--data-dir",
        dataDir.toString(), "--hidden", "8", "--batch", "16", "--steps", "2", "--no-progress", "--report"};
    Path fromFile = dataDir.resolve("trainers-from-file.json");
    Run r = run(concat(job, fromFile.toString()));
    assertEquals(0, r.exit(), r.err());
    assertEquals(2, field(Files.readString(fromFile), "trainers"), Files.readString(fromFile));
    Path fromFlag = dataDir.resolve("trainers-from-flag.json");
    r = run(concat(job, fromFlag.toString(), "--trainers", "1"));
    assertEquals(0, r.exit(), r.err());
    assertEquals(1, field(Files.readString(fromFlag), "trainers"), Files.readString(fromFlag));
  }

  private static String[] concat(String[] head, String... tail) {
    String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
    System.arraycopy(tail, 0, all, head.length, tail.length);
    return all;
  }

  @Test
  void aLocalClusterJournalsIntoTheH2FileGivenAsAUrlAndKeepsIt() throws IOException {
    Path h2 = dataDir.resolve("kept-journal/st");
    Path report = dataDir.resolve("url-journal.json");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--trainers", "2",
        "--ps", "1", "--hidden", "8", "--batch", "16", "--steps", "3", "--no-progress",
        "--journal", "jdbc:h2:" + h2, "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    assertTrue(json.contains("\"journal\": \"h2\""), json);
    assertTrue(Files.isRegularFile(dataDir.resolve("kept-journal/st.mv.db")), "journal file is gone");
    assertTrue(field(json, "journal_bytes") > 0, json);
  }

  @Test
  void aMemoryJournalTooLargeForTheHeapIsRefusedBeforeAnyNodeStarts() throws IOException {
    Path conf = dataDir.resolve("huge-snapshot-every.conf");
    Files.writeString(conf, "shardtrain.ps.snapshot-every = 2000000000\n");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--trainers", "2",
        "--ps", "1", "--hidden", "8", "--batch", "16", "--steps", "3", "--no-progress", "--journal", "memory",
        "--config", conf.toString());
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().contains("the memory journal keeps up to 2 x shardtrain.ps.snapshot-every (2000000000)"),
        r.err());
    assertFalse(r.err().contains("local cluster of"), r.err());
  }

  @Test
  void profileSplitsEveryTrainersStepsIntoPartsThatAddUpToTheirWallTime() throws IOException {
    Path report = dataDir.resolve("profile.json");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--trainers", "2",
        "--ps", "1", "--hidden", "8", "--batch", "16", "--steps", "3", "--no-progress", "--journal", "memory",
        "--profile", "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    String json = Files.readString(report);
    assertTrue(json.contains("\"profile\": {"), json);
    // Each trainer's object, then the total's: steps, wall time, then the parts in nanoseconds.
    Matcher m = Pattern.compile("\"steps\": (\\d+),\\s*\"wall_ns\": (\\d+),\\s*\"compute_ns\": (-?\\d+),"
        + "\\s*\"push_wait_ns\": (-?\\d+),\\s*\"pull_wait_ns\": (-?\\d+),\\s*\"master_wait_ns\": (-?\\d+),"
        + "\\s*\"other_ns\": (-?\\d+),\\s*\"compute_cpu_ns\": (-?\\d+)").matcher(json);
    long[] sum = new long[8];
    for (int i = 0; i < 3; i++) {
      assertTrue(m.find(), "profile " + i + " missing in\n" + json);
      long[] v = new long[8];
      for (int g = 0; g < 8; g++) v[g] = Long.parseLong(m.group(g + 1));
      if (i < 2) {
        assertEquals(3, v[0], "each trainer completes the job's 3 steps");
        for (int g = 0; g < 8; g++) sum[g] += v[g];
      } else {
        assertArrayEquals(sum, v, "the total adds up the trainers");
      }
      long parts = 0;
      for (int g = 2; g < 7; g++) {
        assertTrue(v[g] >= 0, "a negative part in\n" + m.group());
        if (g < 6) parts += v[g];
      }
      assertTrue(parts <= v[1], "the measured parts exceed the wall time in\n" + m.group());
      assertEquals(v[1], parts + v[6], "other is the rest of the wall time");
      assertTrue(v[7] >= 0 && v[7] <= v[2], "compute on CPU is part of compute in\n" + m.group());
    }
    assertFalse(m.find(), "two trainers and a total only:\n" + json);
    assertTrue(field(json, "serialize_calls") > 0, json);
    assertTrue(field(json, "deserialize_calls") > 0, json);
    // Trainer 2's node holds no block: its gradients (8x64+8 + 10x8+10 floats, fp32) cross the wire each step.
    assertTrue(field(json, "bytes_sent") >= 3 * 4 * (8 * 64 + 8 + 10 * 8 + 10), json);
    for (String who : new String[] {"trainer-1", "trainer-2", "all trainers", "serialization"}) {
      assertTrue(r.out().contains("profile " + who), r.out());
    }
  }

  @Test
  void aSingleProcessProfileLeavesOutTheFirstStepsItIsToldToAndTheOptionIsRefusedWhereItCannotApply()
      throws IOException {
    Path report = dataDir.resolve("skip-profile.json");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "16,8",
        "--batch", "32", "--steps", "6", "--compute-threads", "1", "--no-progress", "--profile",
        "--profile-skip-first", "2", "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    String profile = Files.readString(report);
    profile = profile.substring(profile.indexOf("\"profile\": {"));
    assertEquals(4, field(profile, "steps"));
    assertEquals(2, field(profile, "skipped_steps"));
    assertTrue(Pattern.compile("\"op\": \"gemm\\+bias\\+relu 32x64x16\",\\s*\"calls\": 4,").matcher(profile).find(),
        "one first-layer GEMM per profiled step:\n" + profile);
    assertTrue(r.out().contains("profile single process: 4 steps after the first 2, "), r.out());

    String[][] refused = {
        {"--profile-skip-first 2", "--profile-skip-first leaves steps out of --profile's figures; add --profile"},
        {"--profile --profile-skip-first -1", "--profile-skip-first must not be negative, got -1"},
        {"--profile --profile-skip-first 2 --trainers 2", "--profile-skip-first applies to a single process's profile"
            + " (a dense model, no --ps, one trainer); a cluster's profile counts every step"},
    };
    for (String[] c : refused) {
      Run bad = run(("local --steps 6 --no-progress " + c[0]).split(" "));
      assertEquals(2, bad.exit(), c[0] + ": " + bad.out() + bad.err());
      assertEquals("shardtrain: error: " + c[1], bad.err().strip(), c[0]);
    }
  }

  @Test
  void profileSplitsASingleProcesssStepsByOperationLeavingEvaluationOut() throws IOException {
    Path report = dataDir.resolve("single-profile.json");
    // Evaluating every 2 steps runs predict's GEMMs (256 test rows) many times: none may be counted.
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "16,8",
        "--batch", "32", "--steps", "6", "--eval-every", "2", "--compute-threads", "1", "--no-progress", "--profile",
        "--report", report.toString());
    assertEquals(0, r.exit(), r.err());
    assertFalse(r.err().contains("ignored"), r.err());
    String json = Files.readString(report);
    int at = json.indexOf("\"profile\": {");
    assertTrue(at >= 0, json);
    String profile = json.substring(at);
    assertEquals(6, field(profile, "steps"));
    long wall = (long) field(profile, "wall_ns");
    Matcher m = Pattern.compile("\"op\": \"([^\"]+)\",\\s*\"calls\": (\\d+),\\s*\"ns\": (\\d+),\\s*\"ms_per_step\": "
        + "[-0-9.eE]+,\\s*\"share\": [-0-9.eE]+(,\\s*\"gflops\": ([-0-9.eE]+))?").matcher(profile);
    java.util.Map<String, Long> calls = new java.util.HashMap<>();
    long sum = 0, measured = 0;
    int gemms = 0;
    while (m.find()) {
      String op = m.group(1);
      long ns = Long.parseLong(m.group(3));
      assertTrue(ns >= 0, "a negative part in " + m.group());
      calls.put(op, Long.parseLong(m.group(2)));
      sum += ns;
      if (!op.equals("other")) measured += ns;
      if (op.startsWith("gemm")) {
        gemms++;
        assertTrue(m.group(5) != null && Double.parseDouble(m.group(5)) > 0, "no GFLOP/s in " + m.group());
      } else {
        assertTrue(m.group(5) == null, "a rate for a part that is no GEMM: " + m.group());
      }
    }
    assertTrue(measured <= wall, "the measured parts exceed the step time in\n" + profile);
    assertEquals(wall, sum, "other is the rest of the step time:\n" + profile);
    // 64 -> 16 -> 8 -> 10 (the loader counts Fashion-MNIST's ten classes): three forward, three
    // weight-gradient and two input-gradient GEMMs a step; the rectifier ends the hidden layers'
    // forward products and the input gradients that pass back through it.
    assertEquals(8, gemms, profile);
    assertEquals(6L, calls.get("gemm+bias+relu 32x64x16"), "one first-layer GEMM per training step only:\n" + profile);
    assertEquals(6L, calls.get("gemm+reluBackward 32x8x16:nt"), profile);
    assertFalse(calls.containsKey("relu 32x16"), "the rectifier is the products' last pass:\n" + profile);
    assertEquals(6L, calls.get("softmaxCrossEntropy 32x10"), profile);
    assertEquals(6L, calls.get("data"), profile);
    assertEquals(6L * 6, calls.get("optimizer"), "six parameters updated per step:\n" + profile);
    // The evaluations run on the 256 test rows at once.
    assertFalse(calls.keySet().stream().anyMatch(op -> op.contains("256")), "evaluation was counted:\n" + profile);
    assertTrue(r.out().contains("profile single process: 6 steps, "), r.out());
    assertTrue(r.out().contains("profile   gemm 64x32x16:tn: "), r.out());
  }

  @Test
  void unknownFlagIsOneLineAndExitCode2() {
    Run r = run("local", "--learning-rate", "0.1");
    assertEquals(2, r.exit());
    assertEquals(1, r.err().strip().lines().count(), r.err());
    assertTrue(r.err().contains("--learning-rate"), r.err());
  }

  @Test
  void aMisspeltFlagOrCommandIsAnsweredWithTheNearestNamesAndAStrangerWithNone() {
    String[][] cases = {
        {"local --hiden 512", "Unknown options: '--hiden', '512'; did you mean --hidden? (see 'shardtrain local --help')"},
        {"local --lr-schedul constant", "Unknown options: '--lr-schedul', 'constant'; did you mean --lr-schedule?"
            + " (see 'shardtrain local --help')"},
        {"local --epoch=3", "Unknown option: '--epoch=3'; did you mean --epochs? (see 'shardtrain local --help')"},
        {"lcoal", "Unmatched argument at index 0: 'lcoal'; did you mean local? (see 'shardtrain --help')"},
        {"local --xyz 1", "Unknown options: '--xyz', '1' (see 'shardtrain local --help')"},
    };
    for (String[] c : cases) {
      Run r = run(c[0].split(" "));
      assertEquals(2, r.exit(), c[0]);
      assertEquals("shardtrain: error: " + c[1], r.err().strip(), c[0]);
    }
    assertEquals(java.util.List.of("--ps"), io.shardtrain.actors.config.Spelling.closest("--pz", java.util.List.of("--lr", "--ps")),
        "one letter off a short name, not two");
    assertEquals(java.util.List.of("--lr", "--ps"), io.shardtrain.actors.config.Spelling.closest("--pr", java.util.List.of("--ps", "--lr")),
        "both one letter off, in order");
  }

  @Test
  void moreComputeThreadsThanCoresAreWarnedOfAndAsManyAreNot() {
    int cores = Runtime.getRuntime().availableProcessors();
    String warning = "shardtrain: " + (cores + 1) + " compute threads for each of 1 trainer(s) on " + cores
        + " cores: a step's threads would wait for each other's cores, which trains slower than fewer threads;"
        + " use at most " + cores;
    Run over = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "16",
        "--steps", "2", "--no-progress", "--compute-threads", String.valueOf(cores + 1));
    assertEquals(0, over.exit(), over.err());
    assertTrue(over.err().contains(warning), over.err());
    Run fits = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--hidden", "16",
        "--steps", "2", "--no-progress", "--compute-threads", String.valueOf(cores));
    assertEquals(0, fits.exit(), fits.err());
    assertFalse(fits.err().contains("compute threads for each"), fits.err());
  }

  @Test
  void badValuesAreOneLineErrors() throws IOException {
    Run lr = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--lr", "-1");
    assertEquals(2, lr.exit());
    assertTrue(lr.err().contains("lr must be a positive number"), lr.err());
    assertFalse(lr.err().contains("\tat "), "no stack trace expected:\n" + lr.err());
    Run opt = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--optimizer", "rmsprop", "--steps", "1");
    assertEquals(2, opt.exit());
    assertTrue(opt.err().contains("rmsprop"), opt.err());
    Run ds = run("local", "--dataset", "imagenet", "--data-dir", dataDir.toString());
    assertEquals(2, ds.exit());
    assertTrue(ds.err().contains("unknown dataset 'imagenet': expected mnist, fashion-mnist (an MLP), ctr or"
        + " criteo:PATH (a factorization machine)"), ds.err());
    Run precision = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--gradient-precision", "fp16");
    assertEquals(2, precision.exit());
    assertTrue(precision.err().contains("shardtrain.transport.gradient-precision must be fp32 or bf16, not 'fp16'"),
        precision.err());
    assertFalse(precision.err().contains("\tat "), "no stack trace expected:\n" + precision.err());
    Run port = run("node", "--roles", "ps", "--port", "70000");
    assertEquals(2, port.exit());
    assertTrue(port.err().contains("--port must be from 0 to 65535, got 70000"), port.err());
    // Refused before the node starts: nothing on its standard output says it is up.
    String free = String.valueOf(FreePorts.one());
    Run threads = run("node", "--roles", "trainer", "--port", free, "--compute-threads", "0");
    assertEquals(2, threads.exit());
    assertEquals("shardtrain: error: compute threads must be at least 1, got 0", threads.err().strip());
    assertEquals("", threads.out());
    Run grpcPort = run("node", "--roles", "ps", "--port", free, "--grpc-port", "70000");
    assertEquals(2, grpcPort.exit());
    assertEquals("shardtrain: error: shardtrain.grpc.port must be at most 65535, got 70000", grpcPort.err().strip());
    assertEquals("", grpcPort.out());
    Run mode = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--mode", "asynch");
    assertEquals(2, mode.exit());
    assertTrue(mode.err().contains("asynch"), mode.err());
    assertFalse(mode.out().contains("samples/s"), "a single process trained with a misspelt mode:\n" + mode.out());
    Run layout = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--layout", "mixed");
    assertEquals(2, layout.exit());
    assertTrue(layout.err().contains("--layout must be colocated or separate, got 'mixed'"), layout.err());
    Run journal = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--journal", "foo:bar");
    assertEquals(2, journal.exit());
    // Refused before the cluster's banner, not after it.
    assertEquals("shardtrain: error: shardtrain.persistence.journal must be log, h2, postgres or memory, got 'foo:bar'",
        journal.err().strip());
    Path missing = dataDir.resolve("no-such-model");
    Run init = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--init-from", missing.toString());
    assertEquals(2, init.exit());
    assertEquals("shardtrain: error: model directory " + missing + " does not exist", init.err().strip());
    Run resume = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--resume-from", missing.toString());
    assertEquals(2, resume.exit());
    assertEquals("shardtrain: error: cannot resume from " + missing + ": model directory " + missing
        + " does not exist", resume.err().strip());
    Path empty = java.nio.file.Files.createDirectories(dataDir.resolve("empty-model"));
    Run notModel = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(),
        "--trainers", "2", "--init-from", empty.toString());
    assertEquals("shardtrain: error: model directory " + empty + " has no manifest.json (is it a saved model?)",
        notModel.err().strip());
  }

  @Test
  void aReportPathThatCannotHoldAReportIsRefusedBeforeTrainingAndAMissingFolderIsMade() throws IOException {
    Path inTheWay = dataDir.resolve("a-file");
    Files.writeString(inTheWay, "not a folder\n");
    Path report = inTheWay.resolve("r.json");
    Run refused = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--report", report.toString());
    assertEquals(2, refused.exit(), refused.err());
    assertTrue(refused.err().contains("cannot make the directory for the report " + report + ": a file is in the way: "
        + inTheWay), refused.err());
    assertEquals(1, refused.err().strip().lines().count(), refused.err());
    assertFalse(refused.out().contains("samples/s"), "trained before refusing:\n" + refused.out());

    Path nested = dataDir.resolve("reports").resolve("today").resolve("r.json");
    Run written = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "3",
        "--report", nested.toString());
    assertEquals(0, written.exit(), written.err());
    assertEquals(3.0, field(Files.readString(nested), "steps"));
  }

  @Test
  void aPortAnotherProgramHoldsIsOneLineNamingIt() throws IOException {
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Run r = run("node", "--roles", "ps", "--port", String.valueOf(taken.getLocalPort()), "--journal", "memory");
      assertEquals(2, r.exit(), r.err());
      assertEquals(1, r.err().strip().lines().count(), r.err());
      assertTrue(r.err().startsWith("shardtrain: error: cannot listen on a port another program holds")
          && r.err().contains(":" + taken.getLocalPort()) && r.err().contains("Address already in use"), r.err());
    }
  }

  @Test
  void anEmptyGemmShapeAndANegativeConnectTimeoutAreRefused() {
    Run shape = run("bench", "gemm", "--shapes", "64x64x64,");
    assertEquals(2, shape.exit(), shape.err());
    assertTrue(shape.err().startsWith("shardtrain: error: gemm shape '' must be MxKxN"), shape.err());
    Run connect = run("status", "--grpc", "127.0.0.1:1", "--connect-timeout", "-1");
    assertEquals(2, connect.exit(), connect.err());
    assertEquals("shardtrain: error: --connect-timeout must be at least 1 s, got -1", connect.err().strip());
  }

  @Test
  void aSingleProcessSaysWhichClusterFlagsItIgnores() {
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "2",
        "--layout", "separate", "--no-progress");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.err().contains("shardtrain: --layout sets up a local cluster's parameter blocks (--ps or --trainers"
        + " above 1); a single process has none, so it is ignored here"), r.err());
    Run plain = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "2",
        "--no-progress");
    assertFalse(plain.err().contains("ignored here"), plain.err());
  }

  @Test
  void noCommandIsAUsageErrorWithTheUsageOnStderr() {
    Run r = run();
    assertEquals(2, r.exit());
    assertTrue(r.err().startsWith("Usage: shardtrain [-hV] [COMMAND]"), r.err());
    assertEquals("", r.out());
  }

  @Test
  void everyCommandPrintsTheVersion() {
    for (String command : new String[] {"local", "node", "status"}) {
      Run r = run(command, "--version");
      assertEquals(0, r.exit(), r.err());
      assertTrue(r.out().startsWith("shardtrain "), command + ": " + r.out());
    }
  }

  @Test
  void reportsAndModelsInADirectoryThatTakesNoNewFileAreRefusedBeforeTraining() {
    // /proc exists and takes no new entry, even from root (as a read-only or immutable folder would not).
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self")), "a Linux /proc");
    Run report = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--report", "/proc/out.json");
    assertEquals(2, report.exit(), report.err());
    assertTrue(report.err().contains("cannot write the report /proc/out.json: "), report.err());
    assertFalse(report.out().contains("samples/s"), "trained before refusing:\n" + report.out());
    Run model = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--save-model", "/proc/model");
    assertEquals(2, model.exit(), model.err());
    assertTrue(model.err().contains("/proc/.model.probe-"), model.err());
    assertFalse(model.out().contains("samples/s"), "trained before refusing:\n" + model.out());
  }

  @Test
  void aBatchLargerThanTheTrainingSetIsWarnedOfAndTrainsOnTheWholeSet() {
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "2",
        "--batch", "1000", "--no-progress");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.err().contains("warning: --batch 1000 is more than the 512 examples of the training set: each step"
        + " takes them all, a whole epoch"), r.err());
    Run fits = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "2",
        "--batch", "512", "--no-progress");
    assertFalse(fits.err().contains("--batch"), fits.err());
  }

  @Test
  void aReportPathThatIsADirectoryIsRefusedBeforeTraining() throws IOException {
    Path folder = Files.createDirectories(dataDir.resolve("report-folder"));
    Run refused = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--report", folder.toString());
    assertEquals(2, refused.exit(), refused.err());
    assertTrue(refused.err().contains(folder + " is a directory; give the report a file name in it, such as "
        + folder.resolve("report.json")), refused.err());
    assertFalse(refused.out().contains("samples/s"), "trained before refusing:\n" + refused.out());
  }

  @Test
  void aClusterRunWithAMisspeltScheduleIsRefusedInOneLineBeforeAnyNodeStarts() {
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--trainers", "2", "--journal", "memory", "--lr-schedule", "cosin");
    assertEquals(2, r.exit(), r.err());
    assertEquals(1, r.err().strip().lines().count(), r.err());
    assertTrue(r.err().startsWith("shardtrain: error: bad learning-rate schedule 'cosin'"), r.err());
  }

  @Test
  void aClickThroughRunRefusesTheFlagsThatOnlyAnMlpTakes() {
    Path missing = dataDir.resolve("no-such-checkpoint");
    Run resume = run("local", "--dataset", "ctr", "--data-dir", dataDir.toString(), "--steps", "5",
        "--resume-from", missing.toString());
    assertEquals(2, resume.exit(), resume.err());
    assertEquals("shardtrain: error: " + ShardTrain.CTR_DOES_NOT_RESUME, resume.err().strip());
    Run shaped = run("local", "--dataset", "ctr", "--data-dir", dataDir.toString(), "--steps", "5",
        "--hidden", "64", "--init", "pytorch", "--backend", "cuda");
    assertEquals(2, shaped.exit(), shaped.err());
    assertEquals("shardtrain: error: --hidden, --init, --backend shape or place an MLP; --dataset ctr trains a"
        + " factorization machine (k = shardtrain.train.ctr.factors) on plain arrays: leave them out",
        shaped.err().strip());
  }

  @Test
  void aModelTargetThatCannotHoldTheModelIsRefusedBeforeTraining() throws IOException {
    Path taken = dataDir.resolve("taken-model");
    Files.createDirectories(taken);
    Files.writeString(taken.resolve("manifest.json"), "{}\n");
    Run save = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--save-model", taken.toString());
    assertEquals(2, save.exit(), save.err());
    assertTrue(save.err().contains(taken + ": is not empty; refusing to overwrite an existing model"), save.err());
    assertFalse(save.out().contains("samples/s"), "trained before refusing:\n" + save.out());

    Path inTheWay = dataDir.resolve("npy-in-the-way");
    Files.writeString(inTheWay, "not a folder\n");
    Run npy = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "5",
        "--export-npy", inTheWay.resolve("npy").toString());
    assertEquals(2, npy.exit(), npy.err());
    assertTrue(npy.err().contains(inTheWay.toString()), npy.err());
    assertFalse(npy.out().contains("samples/s"), "trained before refusing:\n" + npy.out());
    assertFalse(npy.err().contains("\tat "), "no stack trace expected:\n" + npy.err());
  }

  @Test
  void aModeGivenToASingleProcessIsSaidToBeIgnored() {
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.toString(), "--steps", "2", "--mode",
        "async");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.err().contains("--mode sets how a local cluster's trainers combine their gradients (--ps or --trainers"
        + " above 1); a single process trains alone, so it is ignored here"), r.err());
    assertTrue(r.out().contains("2 steps"), r.out());
  }

  @Test
  void unknownConfigKeyFailsNamingTheKey() throws IOException {
    Path conf = dataDir.resolve("bad.conf");
    Files.writeString(conf, "shardtrain.train.bacth = 32\n");
    Run r = run("local", "--config", conf.toString());
    assertEquals(2, r.exit());
    assertTrue(r.err().contains("shardtrain.train.bacth"), r.err());
  }

  @Test
  void missingDataSaysWhatToDo() {
    Assumptions.assumeFalse(Files.isDirectory(Path.of("/usr/share/datasets/fashion-mnist")),
        "Fashion-MNIST is installed here, so it is not missing");
    Run r = run("local", "--dataset", "fashion-mnist", "--data-dir", dataDir.resolve("empty").toString());
    assertEquals(2, r.exit());
    assertEquals(1, r.err().strip().lines().filter(l -> l.startsWith("shardtrain: error")).count(), r.err());
    assertTrue(r.err().contains("apt-get install dataset-fashion-mnist"), r.err());
  }
}
