package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoadBenchmarkTest {
  static final Pattern LINE = Pattern.compile("(\\d+) pushes acknowledged as applied, block versions add up to (\\d+)");

  @TempDir Path dir;

  @Test
  void concurrentClientsPushAndPullAndEveryAcknowledgedPushIsAppliedOnce() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Path report = dir.resolve("load.json");
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), "bench", "load",
        "--clients", "8", "--seconds", "3", "--hidden", "32", "--block-floats", "512", "--report", report.toString());
    System.out.println(out);
    assertEquals(0, exit, out + "\n" + err);
    Matcher m = LINE.matcher(out.toString());
    assertTrue(m.find(), out.toString());
    long applied = Long.parseLong(m.group(1));
    assertTrue(applied > 8, "only " + applied + " pushes in 3 s");
    assertEquals(applied, Long.parseLong(m.group(2)));
    String json = Files.readString(report);
    assertTrue(json.contains("\"conserved\": true") || json.contains("\"conserved\":true"), json);
    assertTrue(json.contains("\"p999\""), json);
  }

  @Test
  void aNodeOffThisMachineIsRefusedNamingTheAddress() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), "bench", "load",
        "--grpc", "10.0.0.5:8080");
    assertTrue(exit != 0);
    assertTrue(err.toString().contains("--grpc must be 127.x.x.x:PORT or localhost:PORT, not 10.0.0.5:8080"),
        err.toString());
  }

  @Test
  void grpcBandwidthMovesTheWholeParameterThroughTheApiAndTheBulkChannelInOneRun() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Path report = dir.resolve("bandwidth.json");
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), "bench", "grpc-bandwidth",
        "--floats", "4096", "--block", "1024", "--rounds", "3", "--warmup", "2", "--report", report.toString());
    assertEquals(0, exit, out + "\n" + err);
    String json = Files.readString(report).replaceAll("\\s", "");
    assertTrue(json.contains("\"floats\":4096") && json.contains("\"blocks\":4"), json);
    // Each round checks it pulled back all 4096 floats; both paths moved bytes.
    assertTrue(Pattern.compile("\"grpc_gbps\":[0-9.]*[1-9]").matcher(json).find(), json);
    assertTrue(Pattern.compile("\"bulk_gbps\":[0-9.]*[1-9]").matcher(json).find(), json);
  }

  @Test
  void grpcBandwidthRefusesAParameterThatIsNoMultipleOf64() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = ShardTrainCli.execute(new PrintWriter(out, true), new PrintWriter(err, true), "bench", "grpc-bandwidth",
        "--floats", "1000");
    assertEquals(2, exit);
    assertTrue(err.toString().contains("--floats must be a positive multiple of 64, got 1000"), err.toString());
  }
}
