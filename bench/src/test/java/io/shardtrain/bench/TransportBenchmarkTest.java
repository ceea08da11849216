package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TransportBenchmarkTest {

  @Test
  void tinyRunMovesDataOverAllThreePathsAndReportsPositiveFigures() {
    TransportBenchmark.Result r = TransportBenchmark.run(5000, 2, 1024, 2);
    assertEquals(5000, r.floats());
    assertEquals(1024, r.blockFloats());
    for (double gbps : new double[] {r.rawGBps(), r.arteryGBps(), r.bulkGBps()}) {
      assertTrue(gbps > 0 && Double.isFinite(gbps), r.summary());
    }
    assertEquals(r.arteryGBps() / r.rawGBps(), r.arteryToRaw(), 1e-12);
    assertEquals(r.bulkGBps() / r.rawGBps(), r.bulkToRaw(), 1e-12);
    assertTrue(r.summary().contains("Artery"), r.summary());
  }

  @Test
  void blocksLargerThanTheArteryFrameAreRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransportBenchmark.run(4 << 20, 1, 2 << 20, 2));
    assertTrue(e.getMessage().contains("blockFloats"), e.getMessage());
  }
}
