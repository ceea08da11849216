package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SuiteSpreadTest {
  @TempDir Path dir;

  private SuiteBaseline run(String name, String figures) throws IOException {
    Path file = dir.resolve(name);
    Files.writeString(file, "{\"figures\": [" + figures + "]}");
    return SuiteBaseline.load(file);
  }

  @Test
  void aFiguresSpreadIsMaxMinusMinOverTheMedianOfTheRunsThatMeasuredIt() throws IOException {
    SuiteSpread s = SuiteSpread.of(List.of(
        run("1", "{\"name\": \"rate\", \"value\": 110, \"unit\": \"samples/s\"}, {\"name\": \"t\", \"value\": 2, "
            + "\"higher_is_better\": false}"),
        run("2", "{\"name\": \"rate\", \"value\": 90}, {\"name\": \"t\", \"value\": 3}"),
        run("3", "{\"name\": \"rate\", \"value\": 100}")));
    SuiteSpread.Row rate = s.rows().get(0);
    assertEquals("rate", rate.name());
    assertEquals("samples/s", rate.unit());
    assertEquals(3, rate.runs());
    assertEquals(90, rate.min());
    assertEquals(100, rate.median());
    assertEquals(110, rate.max());
    assertEquals(20.0, rate.spreadPct(), 1e-9);
    assertEquals(100 * 20 / 110.0, rate.worstChangePct(), 1e-9, "110 as the baseline of 90");
    SuiteSpread.Row t = s.rows().get(1);
    assertEquals(2, t.runs(), "the third run has no t");
    assertEquals(2.5, t.median());
    assertEquals(40.0, t.spreadPct(), 1e-9);
    assertEquals(50.0, t.worstChangePct(), 1e-9, "lower is better: 2 as the baseline of 3");
    assertTrue(s.markdown().contains("| t |  | 2 | 2.00 | 2.50 | 3.00 | 40.0% | +50.0% |\n"), s.markdown());
    assertTrue(s.markdown().contains("| rate | samples/s | 3 | 90.0 | 100 | 110 | 20.0% | -18.2% |\n"), s.markdown());
  }

  @Test
  void oneRunHasNoSpread() throws IOException {
    SuiteBaseline one = run("1", "{\"name\": \"rate\", \"value\": 1}");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SuiteSpread.of(List.of(one)));
    assertEquals("a spread needs at least 2 runs, got 1", e.getMessage());
  }
}
