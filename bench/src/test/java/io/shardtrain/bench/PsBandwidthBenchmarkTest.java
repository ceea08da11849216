package io.shardtrain.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PsBandwidthBenchmarkTest {

  /**
   * Three blocks, the last one short, over the bulk channel (blocks above its 8192-float minimum)
   * and inline: every round checks each push was applied and each pull came back at that version.
   */
  @Test
  void smallRunPushesAndPullsEveryBlockOverBothPathsAndReportsPositiveFigures() {
    PsBandwidthBenchmark.Result r = PsBandwidthBenchmark.run(2 * 16_384 + 10_000, 16_384, 2);
    assertEquals(3, r.blocks());
    assertEquals(16_384, r.blockFloats());
    for (double gbps : new double[] {r.rawGBps(), r.inlineGBps(), r.bulkGBps()}) {
      assertTrue(gbps > 0 && Double.isFinite(gbps), r.summary());
    }
    assertEquals(r.bulkGBps() / r.inlineGBps(), r.bulkToInline(), 1e-12);
  }

  @Test
  void blockLargerThanTheBulkLimitIsRefusedNamingTheArgument() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PsBandwidthBenchmark.run(1 << 22, (1 << 20) + 1, 1));
    assertTrue(e.getMessage().contains("blockFloats"), e.getMessage());
  }
}
