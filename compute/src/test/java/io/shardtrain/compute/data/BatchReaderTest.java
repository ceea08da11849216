package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchReaderTest {
  /** 23 examples; example i has features (i, -i) and label i % 5. */
  private static Dataset data() {
    int n = 23;
    float[] f = new float[n * 2];
    int[] l = new int[n];
    for (int i = 0; i < n; i++) {
      f[2 * i] = i;
      f[2 * i + 1] = -i;
      l[i] = i % 5;
    }
    return Dataset.classification(f, 2, l, 5);
  }

  private static List<int[]> epoch(BatchReader r) {
    List<int[]> out = new ArrayList<>();
    do {
      out.add(r.next().indices());
    } while (!r.epochDone());
    return out;
  }

  @Test
  void aReusedFeatureArrayGetsTheSameBatchesAndAShortLastBatchGetsItsOwn() {
    BatchReader plain = new BatchReader(data(), 5, 11L, true, ReaderPosition.START);
    BatchReader reusing = new BatchReader(data(), 5, 11L, true, ReaderPosition.START);
    float[] buffer = new float[5 * 2];
    for (int i = 0; i < 10; i++) {
      Batch expected = plain.next();
      Batch actual = reusing.next(buffer);
      assertArrayEquals(expected.indices(), actual.indices(), "batch " + i);
      assertArrayEquals(expected.labels(), actual.labels(), "batch " + i);
      assertArrayEquals(expected.features(), actual.features(), "batch " + i);
      assertEquals(expected.positionAfter(), actual.positionAfter());
      // 23 examples in batches of 5: every fifth batch is the epoch's last, of 3.
      boolean last = i % 5 == 4;
      assertEquals(last ? 3 : 5, actual.size());
      assertEquals(!last, actual.features() == buffer, "batch " + i + " written into the given array");
    }
  }

  @Test
  void anUnreadBatchHasTheSameExamplesAndLabelsAndNoFeatures() {
    BatchReader plain = new BatchReader(data(), 5, 11L, true, ReaderPosition.START);
    BatchReader unread = new BatchReader(data(), 5, 11L, true, ReaderPosition.START);
    for (int i = 0; i < 10; i++) {
      Batch expected = plain.next();
      Batch actual = unread.nextUnread();
      assertArrayEquals(expected.indices(), actual.indices(), "batch " + i);
      assertArrayEquals(expected.labels(), actual.labels(), "batch " + i);
      assertNull(actual.features(), "batch " + i);
      assertEquals(expected.size(), actual.size());
      assertEquals(expected.positionAfter(), actual.positionAfter());
      float[] copied = new float[actual.size() * 2];
      data().copyFeatures(actual.indices(), 0, actual.size(), copied);
      assertArrayEquals(expected.features(), copied, "batch " + i + " copied from its indices");
    }
  }

  @Test
  void everyExampleExactlyOncePerEpochWithMatchingFeaturesAndLabels() {
    BatchReader r = new BatchReader(data(), 5, 11L, true, ReaderPosition.START);
    for (int e = 0; e < 3; e++) {
      int[] seen = new int[23];
      int batches = 0;
      do {
        Batch b = r.next();
        batches++;
        for (int k = 0; k < b.size(); k++) {
          int i = b.indices()[k];
          seen[i]++;
          assertEquals(i, b.features()[2 * k]);
          assertEquals(-i, b.features()[2 * k + 1]);
          assertEquals(i % 5, b.labels()[k]);
        }
        assertNull(b.targets());
      } while (!r.epochDone());
      assertEquals(5, batches); // 4 full batches and the kept partial batch of 3
      int[] ones = new int[23];
      Arrays.fill(ones, 1);
      assertArrayEquals(ones, seen, "epoch " + e);
      assertEquals(new ReaderPosition(e, 23), r.position());
    }
  }

  @Test
  void shuffledEpochsDifferAndUnshuffledKeepsNaturalOrder() {
    BatchReader r = new BatchReader(data(), 23, 11L, true, ReaderPosition.START);
    int[] e0 = r.next().indices();
    int[] e1 = r.next().indices();
    assertFalse(Arrays.equals(e0, e1));
    int[] sorted = e0.clone();
    Arrays.sort(sorted);
    assertFalse(Arrays.equals(sorted, e0), "epoch 0 is shuffled");
    BatchReader plain = new BatchReader(data(), 10, 11L, false, ReaderPosition.START);
    assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, plain.next().indices());
    plain.next();
    Batch last = plain.next();
    assertArrayEquals(new int[] {20, 21, 22}, last.indices());
    assertEquals(new ReaderPosition(0, 23), last.positionAfter());
    assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, plain.next().indices());
    assertEquals(new ReaderPosition(1, 10), plain.position());
  }

  @Test
  void readerRestoredMidEpochOrAtBoundaryYieldsTheSameBatches() {
    BatchReader original = new BatchReader(data(), 4, 99L, true, ReaderPosition.START);
    List<Batch> all = new ArrayList<>();
    for (int i = 0; i < 20; i++) all.add(original.next()); // 6 batches per epoch: spans epochs 0-3
    // Restore after batch 8 (mid epoch 1), after batch 6 (the end of epoch 0) and after batch 3 (mid epoch 0).
    for (int cut : new int[] {8, 6, 3}) {
      ReaderPosition saved = all.get(cut - 1).positionAfter();
      BatchReader restored = new BatchReader(data(), 4, 99L, true, saved);
      for (int i = cut; i < all.size(); i++) {
        Batch b = restored.next();
        assertArrayEquals(all.get(i).indices(), b.indices(), "batch " + i + " after restoring at " + saved);
        assertArrayEquals(all.get(i).features(), b.features());
        assertEquals(all.get(i).positionAfter(), b.positionAfter());
      }
    }
    assertEquals(new ReaderPosition(0, 23), all.get(5).positionAfter());
    BatchReader fromNextEpoch = new BatchReader(data(), 4, 99L, true, new ReaderPosition(1, 0));
    assertArrayEquals(all.get(6).indices(), fromNextEpoch.next().indices());
  }

  @Test
  void aLimitedBatchEndsAtTheLimitAndTheNextOneContinuesInTheSameOrder() {
    BatchReader plain = new BatchReader(data(), 8, 5L, true, ReaderPosition.START);
    int[] first = plain.next().indices();
    int[] second = plain.next().indices();
    BatchReader limited = new BatchReader(data(), 8, 5L, true, ReaderPosition.START);
    Batch three = limited.next(3);
    assertEquals(3, three.size());
    assertEquals(new ReaderPosition(0, 3), three.positionAfter());
    assertArrayEquals(Arrays.copyOfRange(first, 0, 3), three.indices());
    // A limit above the batch size reads a full batch.
    Batch rest = limited.next(100);
    assertEquals(8, rest.size());
    int[] expected = new int[8];
    System.arraycopy(first, 3, expected, 0, 5);
    System.arraycopy(second, 0, expected, 5, 3);
    assertArrayEquals(expected, rest.indices());
    assertThrows(IllegalArgumentException.class, () -> limited.next(0));
  }

  @Test
  void rangeRestrictedReaderWithDropLastCoversOnlyFullBatchesOfItsRange() {
    BatchReader r = new BatchReader(data(), 5, 17, 4, 3L, true, true, ReaderPosition.START);
    assertEquals(12, r.epochLength());
    assertEquals(3, r.batchesPerEpoch());
    for (int e = 0; e < 2; e++) {
      List<int[]> batches = epoch(r);
      assertEquals(3, batches.size());
      int[] flat = batches.stream().flatMapToInt(Arrays::stream).sorted().toArray();
      assertEquals(12, flat.length);
      for (int i : flat) assertTrue(i >= 5 && i < 17, "index " + i + " outside the range");
      assertEquals(12, Arrays.stream(flat).distinct().count());
    }
  }

  @Test
  void targetsAreCopiedForNonClassificationData() {
    Dataset d = Dataset.withTargets(new float[] {1, 2, 3}, 1, new float[] {0.1f, 0.2f, 0.3f});
    Batch b = new BatchReader(d, 2, 0L, false, new ReaderPosition(4, 1)).next();
    assertArrayEquals(new float[] {0.2f, 0.3f}, b.targets());
    assertArrayEquals(new float[] {2, 3}, b.features());
    assertNull(b.labels());
    assertEquals(new ReaderPosition(4, 3), b.positionAfter());
  }

  @Test
  void badArgumentsAreRejectedWithReasons() {
    assertEquals("start offset 24 is beyond the 23 examples of an epoch",
        assertThrows(IllegalArgumentException.class,
            () -> new BatchReader(data(), 4, 0L, true, new ReaderPosition(0, 24))).getMessage());
    assertEquals("batch size must be at least 1, not 0",
        assertThrows(IllegalArgumentException.class,
            () -> new BatchReader(data(), 0, 0L, true, ReaderPosition.START)).getMessage());
    assertEquals("range [20, 30) is outside the dataset's [0, 23)",
        assertThrows(IllegalArgumentException.class,
            () -> new BatchReader(data(), 20, 30, 4, 0L, true, false, ReaderPosition.START)).getMessage());
  }
}
