package io.shardtrain.actors.master;

import java.util.List;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ParameterCountsTest {
  @Test
  void blocksThatAgreeGiveTheirCountsAndNoDisagreement() {
    ParameterCounts c = new ParameterCounts();
    c.add("w", 1500, 96_000);
    c.add("w", 1500, 96_000);
    c.add("b", 1500, 96_000);
    assertEquals(1500, c.updates("w"));
    assertEquals(96_000, c.examples("b"));
    assertEquals(List.of(), c.disagreements());
  }

  @Test
  void blocksThatDisagreeGiveTheLargestCountsAndNameTheSpread() {
    ParameterCounts c = new ParameterCounts();
    c.add("dense1.weight", 1500, 96_000);
    c.add("dense1.weight", 1499, 95_936);
    c.add("dense1.weight", 1500, 96_000);
    c.add("dense1.bias", 1500, 96_000);
    assertEquals(1500, c.updates("dense1.weight"));
    assertEquals(96_000, c.examples("dense1.weight"));
    assertEquals(List.of("dense1.weight: updates 1499 to 1500, examples 95936 to 96000"), c.disagreements());
  }

  @Test
  void aParameterNoBlockAnsweredForIsAnError() {
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> new ParameterCounts().updates("w"));
    assertEquals("no block of parameter w answered", e.getMessage());
  }
}
