package io.shardtrain.persistence.journal;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.management.ObjectName;

/**
 * Keeps the code of the journal over H2 (H2 itself, Slick, HikariCP, akka-persistence-jdbc) at
 * HotSpot's C1. On a 2-core machine C2 spent much of a short H2 run compiling that code while the
 * trainers waited for a core; compiled by C1 it runs about as fast (it mostly hands byte arrays to
 * the JDK's copies and file writes), and the sync and async H2 runs of docs/BENCHMARKS.md trained
 * 1.21x and 1.14x as fast. A compiler directive (JEP 165) added through the DiagnosticCommand MBean, which
 * needs no JVM flag; once per JVM, and only where the journal is H2
 * ({@code shardtrain.persistence.h2-code-at-c1}).
 */
final class JournalCompilation {
  /** The directive's method patterns: class name patterns with '/' between packages, any method. */
  static final List<String> PATTERNS = List.of("org/h2*.*", "slick*.*", "com/zaxxer*.*", "akka/persistence/jdbc*.*");
  private static final Pattern ADDED_REPLY = Pattern.compile("\\s*[1-9][0-9]* compiler directives? added.*", Pattern.DOTALL);
  private static final AtomicBoolean ADDED = new AtomicBoolean();

  private JournalCompilation() {}

  /** The directive: C2 excluded for {@link #PATTERNS}, so their hot methods stay compiled by C1. */
  static String directive() {
    return "[{ match: [" + PATTERNS.stream().map(p -> '"' + p + '"').collect(Collectors.joining(", "))
        + "], c2: { Exclude: true } }]";
  }

  /**
   * Adds the directive unless this JVM has it already. Empty when it is in place; else why not (a
   * JVM without HotSpot's diagnostic commands, say), which changes nothing but speed.
   */
  static Optional<String> keepAtC1() {
    if (ADDED.get()) return Optional.empty();
    synchronized (ADDED) {
      if (ADDED.get()) return Optional.empty();
      Path file = null;
      try {
        file = Files.createTempFile("shardtrain-journal-c1-", ".json");
        Files.writeString(file, directive());
        Object reply = diagnosticCommand("compilerDirectivesAdd", file.toString());
        if (!ADDED_REPLY.matcher(String.valueOf(reply)).matches()) {
          return Optional.of("the journal's code stays with C2: the JVM answered '" + String.valueOf(reply).trim() + "'");
        }
        ADDED.set(true);
        return Optional.empty();
      } catch (Exception | LinkageError e) {
        return Optional.of("the journal's code stays with C2: " + e);
      } finally {
        if (file != null) file.toFile().delete();
      }
    }
  }

  /** Whether this JVM has taken the directive. */
  static boolean inPlace() {
    return ADDED.get();
  }

  private static Object diagnosticCommand(String operation, String... arguments) throws Exception {
    return ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"),
        operation, new Object[] {arguments}, new String[] {String[].class.getName()});
  }
}
