package io.shardtrain.actors.allreduce;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class StepReductionTest {

  /** n members, each with its own buckets; messages go to the next member's queue, delivered on demand. */
  private static final class Ring {
    final int n;
    final StepReduction[] members;
    final List<ArrayDeque<RingChunk>> inbox = new ArrayList<>();
    final List<float[][]> gradients = new ArrayList<>();
    int messages;
    long floatsSent;

    Ring(int[] examples, boolean[] leaving, int[] lengths, long seed) {
      n = examples.length;
      members = new StepReduction[n];
      Random random = new Random(seed);
      for (int r = 0; r < n; r++) {
        inbox.add(new ArrayDeque<>());
        float[][] g = new float[lengths.length][];
        for (int b = 0; b < lengths.length; b++) {
          g[b] = new float[lengths[b]];
          for (int j = 0; j < lengths[b]; j++) g[b][j] = (float) random.nextGaussian();
        }
        gradients.add(g);
      }
      for (int r = 0; r < n; r++) {
        int next = (r + 1) % n;
        // A member with data read task 3 of epoch 1 up to offset 100 * (r + 1).
        long[] mark = examples[r] > 0 ? new long[] {1, 3, 100L * (r + 1)} : null;
        members[r] = new StepReduction(n, r, 7, lengths.length, examples[r], leaving[r], mark, c -> {
          messages++;
          floatsSent += c.values().length;
          inbox.get(next).add(c);
        });
      }
    }

    float[][] original(int r) {
      float[][] g = gradients.get(r);
      float[][] copy = new float[g.length][];
      for (int b = 0; b < g.length; b++) copy[b] = g[b].clone();
      return copy;
    }

    /** Delivers until every queue is empty. */
    void deliver() {
      boolean any = true;
      while (any) {
        any = false;
        for (int r = 0; r < n; r++) {
          RingChunk c = inbox.get(r).poll();
          if (c != null) {
            members[r].received(c);
            any = true;
          }
        }
      }
    }
  }

  @Test
  void fourMembersEndWithBitIdenticalWeightedMeansOfTheirGradients() {
    int[] examples = {64, 64, 32, 17};
    int[] lengths = {10, 3, 1001};
    Ring ring = new Ring(examples, new boolean[4], lengths, 42);
    List<float[][]> before = new ArrayList<>();
    for (int r = 0; r < 4; r++) before.add(ring.original(r));
    // Buckets start in backward's order (last first) on every member, member by member.
    for (int b = lengths.length - 1; b >= 0; b--) {
      for (int r = 0; r < 4; r++) ring.members[r].start(b, ring.gradients.get(r)[b]);
    }
    ring.deliver();
    int total = 64 + 64 + 32 + 17;
    for (int r = 0; r < 4; r++) {
      assertTrue(ring.members[r].done());
      assertEquals(total, ring.members[r].totalExamples());
      assertFalse(ring.members[r].leaving());
    }
    for (int b = 0; b < lengths.length; b++) {
      for (int r = 1; r < 4; r++) assertArrayEquals(ring.gradients.get(0)[b], ring.gradients.get(r)[b]);
      for (int j = 0; j < lengths[b]; j++) {
        double mean = 0;
        for (int r = 0; r < 4; r++) mean += examples[r] * (double) before.get(r)[b][j];
        mean /= total;
        assertEquals(mean, ring.gradients.get(0)[b][j], 1e-5);
      }
    }
    // Reduce-scatter and all-gather: 2(n-1) messages per member and bucket, each a quarter of it.
    assertEquals(3 * 4 * 2 * 3, ring.messages);
    assertEquals(2L * 3 * (10 + 3 + 1001), ring.floatsSent);
  }

  @Test
  void everyMemberLearnsTheTaskMarkOfEveryMemberWithData() {
    int[] lengths = {7, 12};
    Ring ring = new Ring(new int[] {5, 0, 9, 2}, new boolean[4], lengths, 3);
    for (int b = lengths.length - 1; b >= 0; b--) {
      for (int r = 0; r < 4; r++) ring.members[r].start(b, ring.gradients.get(r)[b]);
    }
    ring.deliver();
    for (int r = 0; r < 4; r++) {
      long[] marks = ring.members[r].marks();
      assertEquals(3 * StepReduction.MARK, marks.length, "member " + r);
      java.util.Map<Long, Long> offsetByPosition = new java.util.TreeMap<>();
      for (int k = 0; k < marks.length; k += StepReduction.MARK) {
        assertEquals(1, marks[k + 1]);
        assertEquals(3, marks[k + 2]);
        offsetByPosition.put(marks[k], marks[k + 3]);
      }
      // Member 1 had no data: no mark of its own.
      assertEquals(java.util.Map.of(0L, 100L, 2L, 300L, 3L, 400L), offsetByPosition, "member " + r);
    }
  }

  @Test
  void chunksThatArriveBeforeTheirBucketStartedWaitForIt() {
    int[] lengths = {8, 5};
    Ring ring = new Ring(new int[] {3, 5}, new boolean[2], lengths, 1);
    float[][] a = ring.original(0);
    float[][] b = ring.original(1);
    // Member 0 is done with backward; member 1 has not produced bucket 0 yet.
    ring.members[0].start(1, ring.gradients.get(0)[1]);
    ring.members[0].start(0, ring.gradients.get(0)[0]);
    ring.members[1].start(1, ring.gradients.get(1)[1]);
    ring.deliver();
    assertTrue(ring.members[0].bucketDone(1));
    assertFalse(ring.members[1].bucketDone(0));
    assertFalse(ring.members[0].done());
    ring.members[1].start(0, ring.gradients.get(1)[0]);
    ring.deliver();
    assertTrue(ring.members[0].done() && ring.members[1].done());
    for (int k = 0; k < 2; k++) {
      assertArrayEquals(ring.gradients.get(0)[k], ring.gradients.get(1)[k]);
      for (int j = 0; j < lengths[k]; j++) {
        assertEquals((3 * a[k][j] + 5 * b[k][j]) / 8f, ring.gradients.get(0)[k][j], 1e-6);
      }
    }
  }

  @Test
  void aMemberWithoutDataAddsNothingButTakesTheMeanAndTheLeavingFlag() {
    int[] lengths = {6};
    Ring ring = new Ring(new int[] {4, 0, 2}, new boolean[] {false, true, false}, lengths, 9);
    float[][] a = ring.original(0);
    float[][] c = ring.original(2);
    for (int r = 0; r < 3; r++) ring.members[r].start(0, ring.gradients.get(r)[0]);
    ring.deliver();
    for (int r = 0; r < 3; r++) {
      assertEquals(6, ring.members[r].totalExamples());
      assertTrue(ring.members[r].leaving());
      for (int j = 0; j < 6; j++) {
        assertEquals((4 * a[0][j] + 2 * c[0][j]) / 6f, ring.gradients.get(r)[0][j], 1e-6);
      }
    }
  }

  @Test
  void aStepWhereNoMemberHasDataTotalsZeroExamples() {
    Ring ring = new Ring(new int[] {0, 0}, new boolean[] {true, false}, new int[] {4}, 3);
    for (int r = 0; r < 2; r++) ring.members[r].start(0, ring.gradients.get(r)[0]);
    ring.deliver();
    assertEquals(0, ring.members[0].totalExamples());
    assertTrue(ring.members[1].leaving());
    // No gradient travelled: only the all-gather's means (zeros), a chunk of 2 from each member.
    assertEquals(4, ring.floatsSent);
  }

  @Test
  void bucketsThatAreSlicesOfOneArrayEachGetTheirOwnMeanAndLeaveTheRestAlone() {
    float[] a = {1f, 2f, 3f, 4f, 5f, 6f, 7f};
    float[] b = {-1f, -2f, -3f, -4f, -5f, -6f, -7f};
    List<RingChunk> toB = new ArrayList<>();
    List<RingChunk> toA = new ArrayList<>();
    StepReduction ra = new StepReduction(2, 0, 1, 2, 1, false, toB::add);
    StepReduction rb = new StepReduction(2, 1, 1, 2, 3, false, toA::add);
    // Bucket 0 is [1, 4) of each array, bucket 1 is [4, 6); index 0 and 6 belong to no bucket.
    ra.start(1, a, 4, 2);
    ra.start(0, a, 1, 3);
    rb.start(0, b, 1, 3);
    rb.start(1, b, 4, 2);
    while (!toA.isEmpty() || !toB.isEmpty()) {
      List<RingChunk> forA = new ArrayList<>(toA);
      List<RingChunk> forB = new ArrayList<>(toB);
      toA.clear();
      toB.clear();
      forA.forEach(ra::received);
      forB.forEach(rb::received);
    }
    assertTrue(ra.done() && rb.done());
    // (1 * x + 3 * -x) / 4 = -x / 2 inside the buckets.
    assertArrayEquals(new float[] {1f, -1f, -1.5f, -2f, -2.5f, -3f, 7f}, a);
    assertArrayEquals(new float[] {-1f, -1f, -1.5f, -2f, -2.5f, -3f, -7f}, b);
  }

  @Test
  void aMemberAloneKeepsItsGradientUnrounded() {
    float[] g = {0.1f, -3.3f, 7e-8f};
    float[] copy = g.clone();
    StepReduction alone = new StepReduction(1, 0, 1, 1, 13, false, c -> {
      throw new AssertionError("a ring of one sends nothing");
    });
    alone.start(0, g);
    assertTrue(alone.done());
    assertEquals(13, alone.totalExamples());
    assertArrayEquals(copy, g);
  }

  @Test
  void aChunkOfAnotherStepOrBucketIsRefused() {
    StepReduction r = new StepReduction(2, 0, 5, 1, 1, false, c -> {});
    assertThrows(IllegalArgumentException.class, () -> r.received(new RingChunk(6, 0, 0, 1, false, new float[1])));
    assertThrows(IllegalArgumentException.class, () -> r.received(new RingChunk(5, 1, 0, 1, false, new float[1])));
    assertThrows(IllegalArgumentException.class, () -> r.received(new RingChunk(5, 0, 2, 1, false, new float[1])));
  }
}
