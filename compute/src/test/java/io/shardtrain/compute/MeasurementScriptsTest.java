package io.shardtrain.compute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's single-file measurement programs ({@code scripts/*.java}, run as
 * {@code java --add-modules jdk.incubator.vector -cp compute/target/classes scripts/X.java}) are
 * the commands behind docs/BENCHMARKS.md's figures, and no build compiles them: this compiles each
 * against this module's classes, so that a change of the compute API that breaks one of those
 * commands fails here rather than when someone re-runs a figure.
 */
class MeasurementScriptsTest {

  @Test
  void everyJavaScriptCompilesAgainstTheComputeClasses(@TempDir Path out) throws IOException {
    Path scripts = Path.of("..", "scripts");
    List<Path> sources;
    try (Stream<Path> files = Files.list(scripts)) {
      sources = files.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
    assertTrue(sources.size() >= 5, "the scripts next to this module: " + sources);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "a JDK's compiler");
    List<String> failures = new ArrayList<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(null, Locale.ROOT, null)) {
      for (Path source : sources) {
        // One at a time: each is a program of its own, and two may declare classes of the same name.
        Path classes = Files.createDirectory(out.resolve(source.getFileName().toString().replace(".java", "")));
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> options = List.of("--add-modules", "jdk.incubator.vector", "-proc:none", "-nowarn",
            "-cp", System.getProperty("java.class.path"), "-d", classes.toString());
        boolean compiled = javac.getTask(null, files, diagnostics, options, null,
            files.getJavaFileObjects(source.toFile())).call();
        if (!compiled) {
          StringBuilder sb = new StringBuilder(source.getFileName().toString());
          for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
              sb.append("\n  line ").append(d.getLineNumber()).append(": ").append(d.getMessage(Locale.ROOT));
            }
          }
          failures.add(sb.toString());
        }
      }
    }
    assertEquals(List.of(), failures, "scripts that no longer compile");
  }
}
