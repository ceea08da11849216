package io.shardtrain.tests;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layout rules a newcomer relies on, checked on the compiled main classes of every module:
 * packages import each other in one direction only, compute knows nothing of Akka, and the
 * actors module stays in files one can read in a sitting.
 */
class ArchitectureTest {

  private static JavaClasses classes;

  @BeforeAll
  static void importMainClasses() throws IOException {
    // Only this project's class folders (mvn test) or jars (mvn verify): scanning every jar on the
    // class path for io.shardtrain took 20 s.
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<Path> ours = Stream.of(classPath.split(java.io.File.pathSeparator))
        .map(Path::of)
        .filter(p -> p.endsWith(Path.of("target", "classes")) || p.getFileName().toString().startsWith("shardtrain-"))
        .toList();
    List<Location> locations = new java.util.ArrayList<>();
    for (Path p : ours) {
      locations.add(p.toString().endsWith(".jar") ? Location.of(new JarFile(p.toFile())) : Location.of(p));
    }
    classes = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importLocations(locations);
    assertTrue(classes.contain("io.shardtrain.compute.Tensor")
        && classes.contain("io.shardtrain.actors.trainer.Trainer"), "the main classes of compute and actors are in " + ours);
  }

  @Test
  void noTwoPackagesImportEachOther() {
    // One slice per package (io.shardtrain.actors, io.shardtrain.actors.ps, ...), subpackages apart.
    slices().matching("io.shardtrain.(**)").should().beFreeOfCycles().check(classes);
  }

  @Test
  void computeKnowsNothingOfAkkaOrActors() {
    noClasses().that().resideInAPackage("io.shardtrain.compute..")
        .should().dependOnClassesThat().resideInAnyPackage("akka..", "io.shardtrain.actors..",
            "io.shardtrain.persistence..")
        .check(classes);
  }

  @Test
  void noSourceFileOfTheActorsModuleIsLongerThan500Lines() throws IOException {
    Path root = Path.of("..", "actors", "src", "main", "java");
    List<String> tooLong;
    try (Stream<Path> files = Files.walk(root)) {
      tooLong = files.filter(p -> p.toString().endsWith(".java"))
          .filter(p -> lines(p) > 500)
          .map(p -> root.relativize(p) + " (" + lines(p) + " lines)")
          .collect(Collectors.toList());
    }
    assertEquals(List.of(), tooLong);
  }

  private static long lines(Path p) {
    try (Stream<String> s = Files.lines(p)) {
      return s.count();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + p, e);
    }
  }
}
