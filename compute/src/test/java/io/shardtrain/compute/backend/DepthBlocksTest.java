package io.shardtrain.compute.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DepthBlocksTest {

  @Test
  void aDepthIsCutIntoEqualBlocksOfAtMost256AndSplitInWholeBlocks() {
    assertEquals(196, DepthBlocks.block(784));
    assertEquals(4, DepthBlocks.count(784));
    assertEquals(392, DepthBlocks.start(784, 1, 2));
    assertEquals(784, DepthBlocks.start(784, 2, 2));
    // Three blocks of 200 on two threads: one on the first, two on the second.
    assertEquals(200, DepthBlocks.block(600));
    assertEquals(200, DepthBlocks.start(600, 1, 2));
    // The last block may be shorter: 700 is 234 + 234 + 232.
    assertEquals(234, DepthBlocks.block(700));
    assertEquals(700, DepthBlocks.start(700, 3, 3));
    // One block is never cut: it falls whole to one part (VectorGemm splits only with a block per thread).
    assertEquals(1, DepthBlocks.count(256));
    assertEquals(0, DepthBlocks.start(256, 1, 2));
    assertEquals(256, DepthBlocks.start(256, 2, 2));
  }

  @Test
  void aDepthIsCutIntoEqualBlocksOfAtMostTheMaximumGiven() {
    assertEquals(392, DepthBlocks.block(784, 512));
    assertEquals(512, DepthBlocks.block(1024, 512));
    assertEquals(342, DepthBlocks.block(1025, 512));
    assertEquals(100, DepthBlocks.block(100, 512));
    assertEquals(1, DepthBlocks.block(0, 512));
  }
}
