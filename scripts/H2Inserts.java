import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Random;

/**
 * What the embedded H2 file costs on its own for a sync x2 MNIST run's journal, without Akka, Slick
 * or the trainers: per step, the four blocks' events (2.14 MB in all) inserted as BLOBs, and every
 * 10 steps the events behind deleted, with the URL options ShardTrain uses. Prints, for each round
 * of STEPS steps, the rate and the whole process's CPU seconds per GB written (the first round
 * includes loading and compiling H2's code).
 *
 * <p>Usage: {@code java -cp samples/target/lib/h2-2.2.224.jar scripts/H2Inserts.java [STEPS [ROUNDS [OPTIONS]]]},
 * OPTIONS more of H2's URL settings (e.g. {@code ";AUTO_COMPACT_FILL_RATE=0"}); at the end, the file's size.
 */
public class H2Inserts {
  public static void main(String[] args) throws Exception {
    int steps = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    int blocks = 4;
    byte[] payload = new byte[2_140_000 / blocks];
    new Random(1).nextBytes(payload);
    Path dir = Files.createTempDirectory("h2-inserts");
    OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    String url = "jdbc:h2:file:" + dir.resolve("j") + ";RETENTION_TIME=250;WRITE_DELAY=100"
        + (args.length > 2 ? args[2] : "");
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE ev(pid VARCHAR(255), seq BIGINT, payload BLOB, PRIMARY KEY(pid, seq))");
      }
      PreparedStatement insert = c.prepareStatement("INSERT INTO ev VALUES(?, ?, ?)");
      PreparedStatement delete = c.prepareStatement("DELETE FROM ev WHERE pid = ? AND seq <= ?");
      for (int round = 0; round < rounds; round++) {
        long t0 = System.nanoTime();
        long cpu0 = os.getProcessCpuTime();
        for (int step = round * steps; step < (round + 1) * steps; step++) {
          for (int b = 0; b < blocks; b++) {
            insert.setString(1, "block-" + b);
            insert.setLong(2, step);
            insert.setBytes(3, payload);
            insert.executeUpdate();
          }
          if (step % 10 == 9) {
            for (int b = 0; b < blocks; b++) {
              delete.setString(1, "block-" + b);
              delete.setLong(2, step - 10);
              delete.executeUpdate();
            }
          }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double gb = (double) steps * blocks * payload.length / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        System.out.printf("round %d: %d steps in %.2f s, %.0f steps/s, %.0f MB/s, %.2f CPU s per GB%n",
            round + 1, steps, seconds, steps / seconds, gb * 1000 / seconds, cpu / gb);
      }
    }
    System.out.printf("file: %.0f MB%n", Files.size(dir.resolve("j.mv.db")) / 1e6);
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
