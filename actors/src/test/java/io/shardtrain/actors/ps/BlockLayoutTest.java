package io.shardtrain.actors.ps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.shardtrain.compute.optim.OptimizerSpec;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockLayoutTest {

  @Test
  void cutsEachParameterIntoFullBlocksAndOneShorterTail() {
    List<BlockSlice> blocks = BlockLayout.of(
        List.of(new ParamShape("w1", 10), new ParamShape("b1", 4), new ParamShape("w2", 8)), 4);
    assertEquals(List.of(
        new BlockSlice("w1", 0, 0, 4), new BlockSlice("w1", 1, 4, 4), new BlockSlice("w1", 2, 8, 2),
        new BlockSlice("b1", 0, 0, 4),
        new BlockSlice("w2", 0, 0, 4), new BlockSlice("w2", 1, 4, 4)), blocks);
    assertEquals("w1#2", blocks.get(2).entityId());
  }

  @Test
  void slicesCoverEveryValueExactlyOnce() {
    int[] sizes = {1, 7, 262_144, 262_145, 1_000_003};
    for (int blockSize : new int[] {1, 3, 1000, 262_144}) {
      for (int size : sizes) {
        if (size / blockSize > 100_000) continue;
        List<BlockSlice> blocks = BlockLayout.of(List.of(new ParamShape("p", size)), blockSize);
        int next = 0;
        for (int i = 0; i < blocks.size(); i++) {
          BlockSlice b = blocks.get(i);
          assertEquals(i, b.index());
          assertEquals(next, b.offset(), "block " + i + " of size " + size + " by " + blockSize);
          assertTrue(b.length() <= blockSize && b.length() >= 1);
          next += b.length();
        }
        assertEquals(size, next);
        assertEquals((size + blockSize - 1) / blockSize, blocks.size());
      }
    }
  }

  @Test
  void rejectsBadSizesDuplicateNamesAndBadBlockSize() {
    assertThrows(IllegalArgumentException.class, () -> new ParamShape("w", 0));
    assertThrows(IllegalArgumentException.class, () -> new ParamShape(" ", 3));
    IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
        () -> BlockLayout.of(List.of(new ParamShape("w", 3), new ParamShape("w", 4)), 2));
    assertTrue(dup.getMessage().contains("'w'"), dup.getMessage());
    IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
        () -> BlockLayout.of(List.of(new ParamShape("w", 3)), 0));
    assertTrue(size.getMessage().contains("0"), size.getMessage());
  }

  @Test
  void blockSpecValidatesItsFieldsAndSchedule() {
    OptimizerSpec sgd = OptimizerSpec.defaults(OptimizerSpec.Kind.SGD);
    BlockSlice slice = new BlockSlice("w", 1, 4, 4);
    BlockSpec spec = BlockSpec.of(slice, sgd, "step:10:0.5", 0.1f, BlockSpec.Mode.SYNC, -1);
    assertEquals("w#1", spec.entityId());
    assertEquals(slice, spec.slice());
    IllegalArgumentException schedule = assertThrows(IllegalArgumentException.class,
        () -> BlockSpec.of(slice, sgd, "nope", 0.1f, BlockSpec.Mode.SYNC, -1));
    assertTrue(schedule.getMessage().contains("nope"), schedule.getMessage());
    assertThrows(IllegalArgumentException.class, () -> BlockSpec.of(slice, sgd, "constant", Float.NaN, BlockSpec.Mode.SYNC, -1));
    assertThrows(IllegalArgumentException.class, () -> BlockSpec.of(slice, sgd, "constant", 0.1f, BlockSpec.Mode.SYNC, -2));
    assertThrows(IllegalArgumentException.class, () -> BlockSpec.of(slice, null, "constant", 0.1f, BlockSpec.Mode.SYNC, -1));
    assertThrows(IllegalArgumentException.class, () -> new BlockSpec("w", 0, 0, 0, sgd, "constant", 0.1f, BlockSpec.Mode.ASYNC, -1));
  }

  /** 2 x snapshot-every whole-block events under exact durability: 2 x 10 x 535,818 floats of 4 bytes; none under checkpoint. */
  @Test
  void theJournalHoldsAtMostTwiceSnapshotEveryEventsOfEveryBlockUnderExactDurabilityOnly() {
    PsSettings exact = new PsSettings(262_144, 10, Duration.ofSeconds(30), Duration.ofSeconds(10),
        PsSettings.NonFinitePolicy.REJECT, -1, 1);
    assertEquals(42_865_440L, exact.heldEventBytes(535_818));
    assertEquals(0L, exact.withDurability(PsSettings.Durability.CHECKPOINT).heldEventBytes(535_818));
  }

  @Test
  void settingsReadTheReferenceDefaultsAndRejectAnUnknownPolicy() {
    PsSettings defaults = PsSettings.fromConfig(ConfigFactory.load());
    assertEquals(new PsSettings(262_144, 10, Duration.ofSeconds(30), Duration.ofSeconds(10),
        PsSettings.NonFinitePolicy.REJECT, -1, 1), defaults);
    IllegalArgumentException noNodes = assertThrows(IllegalArgumentException.class, () -> PsSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.ps.min-nodes = 0").withFallback(ConfigFactory.load())));
    assertTrue(noNodes.getMessage().contains("shardtrain.ps.min-nodes"), noNodes.getMessage());
    IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> PsSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.ps.idle-passivation = -1s").withFallback(ConfigFactory.load())));
    assertEquals("shardtrain.ps.idle-passivation must be 0 (off) or a positive duration, not PT-1S", negative.getMessage());
    PsSettings custom = PsSettings.fromConfig(ConfigFactory.parseString(
        "shardtrain.ps { non-finite = skip, max-staleness = 3, pull-timeout = 300ms }").withFallback(ConfigFactory.load()));
    assertEquals(PsSettings.NonFinitePolicy.SKIP, custom.nonFinite());
    assertEquals(3, custom.maxStaleness());
    assertEquals(Duration.ofMillis(300), custom.pullTimeout());
    assertEquals(3, BlockSpec.of(new BlockSlice("w", 0, 0, 2), OptimizerSpec.defaults(OptimizerSpec.Kind.SGD),
        "constant", 0.1f, BlockSpec.Mode.ASYNC, custom).maxStaleness());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PsSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.ps.non-finite = clamp").withFallback(ConfigFactory.load())));
    assertTrue(e.getMessage().contains("clamp"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> PsSettings.fromConfig(
        ConfigFactory.parseString("shardtrain.ps.snapshot-every = 0").withFallback(ConfigFactory.load())));
  }
}
