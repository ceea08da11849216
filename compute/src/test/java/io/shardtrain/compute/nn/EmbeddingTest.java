package io.shardtrain.compute.nn;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.shardtrain.compute.Tensor;
import io.shardtrain.compute.backend.CpuBackend;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Embedding}: lookup, table gradient against central differences with repeated ids
 * (a lookup is linear: eps 1e-2, relative error below 1e-3), sparse zeroing between steps,
 * touched rows, bad ids.
 */
class EmbeddingTest {
  private static final CpuBackend BACKEND = CpuBackend.create(1);

  @AfterAll
  static void close() {
    BACKEND.close();
  }

  @Test
  void forwardGathersTheRowsOfTheIds() {
    Embedding e = new Embedding("emb", 4, 3, BACKEND, new Random(1));
    Tensor t = e.table().value();
    Tensor out = e.forward(new int[] {3, 0, 3});
    assertArrayEquals(new int[] {3, 3}, out.shape());
    for (int c = 0; c < 3; c++) {
      assertEquals(t.get(3, c), out.get(0, c), 0f);
      assertEquals(t.get(0, c), out.get(1, c), 0f);
      assertEquals(t.get(3, c), out.get(2, c), 0f);
    }
  }

  @Test
  void tableGradientWithRepeatedIdsMatchesCentralDifferences() {
    Random rnd = new Random(2);
    Embedding e = new Embedding("emb", 6, 4, BACKEND, rnd);
    int[] ids = {2, 5, 2, 0, 2};
    Tensor r = GradCheck.random(rnd, 1f, ids.length, 4);
    e.forward(ids);
    e.backward(r);
    float[] analytic = e.table().grad().data().clone();
    GradCheck.checkAll("dTable", e.table().value().data(), analytic, 1e-2, 1e-3,
        () -> GradCheck.project(e.forward(ids), r));
    // Row 2 appears three times: its gradient is the sum of those three upstream rows.
    assertEquals(r.get(0, 1) + r.get(2, 1) + r.get(4, 1), e.table().grad().get(2, 1), 1e-6f);
    for (int row : new int[] {1, 3, 4}) {
      for (int c = 0; c < 4; c++) assertEquals(0f, e.table().grad().get(row, c), 0f);
    }
  }

  @Test
  void nextBackwardZeroesOnlyTheRowsThePreviousOneWrote() {
    Random rnd = new Random(3);
    Embedding e = new Embedding("emb", 6, 2, BACKEND, rnd);
    e.forward(new int[] {1, 3});
    e.backward(Tensor.of(new float[] {1, 1, 2, 2}, 2, 2));
    // A marker in a row no step touched shows which rows the next backward clears.
    e.table().grad().set(5, 0, 42f);
    e.forward(new int[] {3, 4, 4});
    e.backward(Tensor.of(new float[] {10, 20, 1, 2, 3, 4}, 3, 2));
    float[] g = e.table().grad().data();
    assertArrayEquals(new float[] {0, 0, 0, 0, 0, 0, 10, 20, 4, 6, 42, 0}, g, 0f);
  }

  @Test
  void touchedRowsAreTheDistinctIdsInAscendingOrder() {
    Embedding e = new Embedding("emb", 10, 2, BACKEND, new Random(4));
    e.forward(new int[] {5, 1, 5, 3, 1, 9});
    assertArrayEquals(new int[] {1, 3, 5, 9}, e.touchedRows());
    e.forward(new int[] {7});
    assertArrayEquals(new int[] {7}, e.touchedRows());
  }

  @Test
  void outOfRangeIdsAreRejectedWithTheirPosition() {
    Embedding e = new Embedding("words", 5, 2, BACKEND, new Random(5));
    for (int bad : new int[] {-1, 5}) {
      IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
          () -> e.forward(new int[] {0, 4, bad}));
      assertTrue(ex.getMessage().contains("words") && ex.getMessage().contains("id " + bad)
          && ex.getMessage().contains("position 2") && ex.getMessage().contains("[0, 5)"), ex.getMessage());
    }
  }

  @Test
  void gradientOfTheWrongShapeNamesBothShapes() {
    Embedding e = new Embedding("emb", 5, 2, BACKEND, new Random(6));
    e.forward(new int[] {1, 2, 3});
    IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
        () -> e.backward(Tensor.zeros(2, 3)));
    assertTrue(ex.getMessage().contains("[2, 3]") && ex.getMessage().contains("[3, 2]"), ex.getMessage());
  }

  @Test
  void initHasVarianceOneOverDimAndDependsOnlyOnTheSeed() {
    Embedding a = new Embedding("emb", 500, 16, BACKEND, new Random(7));
    Embedding b = new Embedding("emb", 500, 16, BACKEND, new Random(7));
    assertArrayEquals(a.table().value().data(), b.table().value().data(), 0f);
    double sumSq = 0;
    for (float v : a.table().value().data()) sumSq += (double) v * v;
    assertEquals(1.0 / 16, sumSq / (500 * 16), 0.05 / 16);
    assertEquals("emb.table", a.parameters().get(0).name());
  }
}
