package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class GemmBenchmarkTest {

  @Test
  void theMlpStepMultipliesEachLayersForwardWeightGradientAndAboveTheFirstItsInputGradient() {
    List<GemmBenchmark.Shape> shapes = GemmBenchmark.mlpShapes(64, 784, 512, 256, 10);
    assertEquals(List.of("64x784x512", "784x64x512:tn", "64x512x256", "512x64x256:tn", "64x256x512:nt",
        "64x256x10", "256x64x10:tn", "64x10x256:nt"), shapes.stream().map(GemmBenchmark.Shape::dims).toList());
    // Forward and backward of one step: 3 x (2 x 64 x sum of in*out) minus the first layer's input gradient.
    double flops = shapes.stream().mapToDouble(GemmBenchmark.Shape::flops).sum();
    assertEquals(2.0 * 64 * (3 * (784 * 512 + 512 * 256 + 256 * 10) - 784 * 512), flops, 1e-3);
  }

  @Test
  void shapesParseWithTheirTranspositionAndBadOnesAreNamed() {
    GemmBenchmark.Shape s = GemmBenchmark.Shape.parse(" 784x64x512:TN ");
    assertEquals(784, s.m());
    assertEquals(64, s.k());
    assertEquals(512, s.n());
    assertTrue(s.transA());
    assertEquals("784x64x512:tn", s.dims());
    assertEquals("64x784x512", GemmBenchmark.Shape.parse("64x784x512").dims());
    for (String bad : new String[] {"64x784", "64x784x512:xy", "axbxc", "0x2x3"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GemmBenchmark.Shape.parse(bad));
      assertTrue(e.getMessage().contains("gemm shape"), e.getMessage());
    }
  }

  @Test
  void aTransposedShapeRunsAndReportsPositiveThroughput() {
    GemmBenchmark.Result r = GemmBenchmark.run(GemmBenchmark.Shape.parse("8x16x24:tt"), 1, 1, 3);
    assertTrue(r.gflops() > 0 && r.bestGflops() >= r.gflops(), r.toString());
    assertTrue(r.medianSeconds() > 0, r.toString());
  }

  @Test
  void aMinimumMeasuringTimeAddsIterationsBeyondTheCountAndZeroKeepsTheCount() {
    GemmBenchmark.Shape tiny = GemmBenchmark.Shape.parse("8x16x24");
    assertEquals(3, GemmBenchmark.run(tiny, 1, 0, 3, 0, false).iterations());
    // Once warmed up (a second at least), an iteration of 2e7 flops (3,256 products of this shape)
    // takes milliseconds: many fit in 0.3 s.
    GemmBenchmark.Result r = GemmBenchmark.run(tiny, 1, 1, 3, 0.3, false);
    assertTrue(r.iterations() > 3, r.toString());
    for (double bad : new double[] {-1, Double.NaN, Double.POSITIVE_INFINITY}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> GemmBenchmark.run(tiny, 1, 0, 3, bad, false));
      assertTrue(e.getMessage().contains("minimum measuring time"), e.getMessage());
    }
  }

  @Test
  void productsWithOperandsRewrittenBeforeEachRunOnTwoThreads() {
    GemmBenchmark.Result r = GemmBenchmark.run(GemmBenchmark.Shape.parse("128x256x128"), 2, 1, 3, true);
    assertTrue(r.gflops() > 0 && r.bestGflops() >= r.gflops(), r.toString());
    assertEquals(2, r.threads());
  }
}
