package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SuiteBaselineTest {
  @TempDir Path dir;

  private SuiteBaseline baseline(String figures) throws IOException {
    Path file = dir.resolve("suite.json");
    Files.writeString(file, "{\"figures\": [" + figures + "]}");
    return SuiteBaseline.load(file);
  }

  private static SuiteBaseline.Change only(SuiteBaseline.Check check) {
    assertEquals(1, check.changes().size());
    return check.changes().get(0);
  }

  @Test
  void aHigherIsBetterFigureRegressesOnlyWhenItFallsByMoreThanTheTolerance() throws IOException {
    SuiteBaseline b = baseline("{\"name\": \"rate\", \"value\": 200}");
    SuiteBaseline.Change within = only(b.compare(List.of(new SuiteFigure("rate", 181, "samples/s", true)), 10, 1));
    assertEquals(-9.5, within.changePct(), 1e-9);
    assertEquals(9.5, within.worsePct(), 1e-9);
    assertFalse(within.regressed());
    SuiteBaseline.Change beyond = only(b.compare(List.of(new SuiteFigure("rate", 179, "samples/s", true)), 10, 1));
    assertEquals(-10.5, beyond.changePct(), 1e-9);
    assertTrue(beyond.regressed());
    assertFalse(only(b.compare(List.of(new SuiteFigure("rate", 400, "samples/s", true)), 0, 1)).regressed(),
        "better is never a regression, even at tolerance 0");
  }

  @Test
  void aLowerIsBetterFigureRegressesWhenItRisesByMoreThanTheTolerance() throws IOException {
    SuiteBaseline b = baseline("{\"name\": \"recovery\", \"value\": 2.0}");
    SuiteBaseline.Change within = only(b.compare(List.of(new SuiteFigure("recovery", 2.18, "s", false)), 10, 1));
    assertEquals(9.0, within.changePct(), 1e-9);
    assertFalse(within.regressed());
    SuiteBaseline.Change beyond = only(b.compare(List.of(new SuiteFigure("recovery", 2.22, "s", false)), 10, 1));
    assertEquals(11.0, beyond.changePct(), 1e-9);
    assertTrue(beyond.regressed());
    assertFalse(only(b.compare(List.of(new SuiteFigure("recovery", 0.5, "s", false)), 10, 1)).regressed());
  }

  @Test
  void figuresTheBaselineLacksAreNewAndItsOwnUnmeasuredFiguresAreListed() throws IOException {
    SuiteBaseline b = baseline("{\"name\": \"a\", \"value\": 1}, {\"name\": \"gone\", \"value\": 3}");
    SuiteBaseline.Check check = b.compare(List.of(new SuiteFigure("a", 1, "x", true),
        new SuiteFigure("b", 0.1, "x", true)), 5, 1);
    assertTrue(check.changes().get(0).inBaseline());
    assertEquals(0, check.changes().get(0).changePct(), 0);
    assertFalse(check.changes().get(1).inBaseline());
    assertFalse(check.changes().get(1).regressed());
    assertEquals(List.of("gone"), check.missing());
    assertEquals(List.of(), check.regressions());
  }

  @Test
  void aBaselineOfZeroOrNoValueCannotBeComparedAndIsNoRegression() throws IOException {
    SuiteBaseline b = baseline("{\"name\": \"zero\", \"value\": 0}, {\"name\": \"none\", \"value\": null}");
    SuiteBaseline.Check check = b.compare(List.of(new SuiteFigure("zero", 5, "bytes", false),
        new SuiteFigure("none", 5, "bytes", false)), 0, 1);
    for (SuiteBaseline.Change c : check.changes()) {
      assertTrue(c.inBaseline());
      assertTrue(Double.isNaN(c.changePct()));
      assertFalse(c.regressed());
    }
  }

  @Test
  void aSeededFigureIsHeldToTheSeededToleranceAndATimedOneToTheOther() throws IOException {
    SuiteBaseline b = baseline("{\"name\": \"accuracy\", \"value\": 0.95}, {\"name\": \"rate\", \"value\": 0.95}");
    SuiteBaseline.Check check = b.compare(List.of(new SuiteFigure("accuracy", 0.94, "fraction", true, true),
        new SuiteFigure("rate", 0.94, "samples/s", true)), 80, 1);
    assertEquals(-100 * 0.01 / 0.95, check.changes().get(0).changePct(), 1e-9);
    assertTrue(check.changes().get(0).regressed(), "1.05% lower, seeded tolerance 1%");
    assertFalse(check.changes().get(1).regressed(), "the same change of a timed figure is noise at 80%");
    assertEquals(1, check.seededTolerancePct());
  }

  @Test
  void aBaselineNamingAFigureTwiceIsRefused() throws IOException {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> baseline("{\"name\": \"a\", \"value\": 1}, {\"name\": \"a\", \"value\": 2}"));
    assertTrue(e.getMessage().endsWith("names the figure 'a' twice"), e.getMessage());
  }
}
