package io.shardtrain.persistence.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * H2's auto-server, which lets the other JVMs of one machine share a journal file, listens on
 * loopback only (read from Linux's /proc/net/tcp). In a JVM of its own, because H2 reads its bind address once, when it loads.
 */
class H2AutoServerLoopbackTest {
  @TempDir Path dir;

  /** Opens an auto-server database as {@link Journal#start} does; prints its server and listening addresses. */
  public static void main(String[] args) throws Exception {
    String url = JournalSettings.h2Url(Path.of(args[0]), true, java.time.Duration.ofMillis(250),
        java.time.Duration.ofMillis(100));
    if (Journal.keepH2AutoServerOnLoopback(url).isPresent()) throw new AssertionError("H2 not on loopback");
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      Properties lock = new Properties();
      try (InputStream in = Files.newInputStream(Path.of(args[0] + ".lock.db"))) {
        lock.load(in);
      }
      String server = lock.getProperty("server");
      System.out.println("server=" + server);
      // The kernel's word for where the socket listens: local address, hex, of state 0A (LISTEN).
      String port = String.format("%04X", Integer.parseInt(server.substring(server.lastIndexOf(':') + 1)));
      for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
        for (String line : Files.readAllLines(Path.of(table))) {
          String[] f = line.trim().split("\\s+");
          if (f.length > 3 && f[1].endsWith(":" + port) && f[3].equals("0A")) System.out.println("listen=" + f[1]);
        }
      }
    }
  }

  @Test
  void theAutoServerListensOnLoopbackOnly() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), H2AutoServerLoopbackTest.class.getName(),
        dir.resolve("journal").toString()).redirectErrorStream(true).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe JVM did not finish");
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), out);
    // 127.0.0.1 as the kernel lists it (0100007F, or ::ffff:127.0.0.1 in tcp6); a wildcard bind
    // would read all zeros.
    var listening = out.lines().filter(l -> l.startsWith("listen=")).toList();
    assertEquals(1, listening.size(), out);
    assertTrue(listening.get(0).matches("listen=(0000000000000000FFFF0000)?0100007F:[0-9A-F]{4}"), out);
  }
}
