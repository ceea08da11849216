package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CriteoReaderTest {
  @TempDir Path dir;

  private static String line(String label, String[] ints, String[] cats) {
    return label + "\t" + String.join("\t", ints) + "\t" + String.join("\t", cats);
  }

  private static String[] ints(String first) {
    String[] a = new String[13];
    java.util.Arrays.fill(a, "");
    a[0] = first;
    a[1] = "-1";
    a[12] = "0";
    return a;
  }

  private static String[] cats(String first) {
    String[] a = new String[26];
    for (int f = 0; f < 26; f++) a[f] = "68fd1e64";
    a[0] = first;
    a[25] = "";
    return a;
  }

  @Test
  void readsLabelsLogScaledIntegersAndHashedCategoriesWithEmptyFields() throws Exception {
    Path file = dir.resolve("day.tsv");
    Files.writeString(file, line("1", ints("7"), cats("05db9164")) + "\n" + line("0", ints(""), cats("")) + "\n");
    CtrDataset d = new CriteoReader(1 << 20, 0).read(file);
    assertEquals(2, d.size());
    assertArrayEquals(new float[] {1f, 0f}, d.labels());
    assertEquals((float) Math.log(8), d.dense()[0], 1e-6);
    assertEquals((float) -Math.log(2), d.dense()[1], 1e-6);
    assertEquals(0f, d.dense()[2]);
    assertEquals(0f, d.dense()[13]); // the empty first integer of line 2
    int[] ids = d.ids();
    assertEquals(CriteoReader.categoricalId(0, "05db9164", 1 << 20), ids[0]);
    assertEquals(CriteoReader.categoricalId(0, null, 1 << 20), ids[26]);
    // The same value in two fields is two features; upper and lower case hex are one value.
    assertNotEquals(ids[1], ids[2]);
    assertEquals(CriteoReader.categoricalId(3, "68FD1E64", 1 << 20), ids[3]);
    for (int id : ids) assertTrue(id >= 0 && id < (1 << 20));
    assertTrue(Double.isNaN(d.bayesAuc()));
  }

  @Test
  void aDirectoryIsRefusedNamingIt() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> new CriteoReader(1 << 10, 0).read(dir));
    assertEquals(dir + " is a directory, not a Criteo TSV file", e.getMessage());
  }

  @Test
  void aLineWithTheWrongNumberOfFieldsNamesFileAndLineAndReturnsNothing() throws Exception {
    Path file = dir.resolve("bad.tsv");
    String good = line("0", ints("1"), cats("aa"));
    Files.writeString(file, good + "\n" + good + "\n" + good.substring(0, good.lastIndexOf('\t')) + "\n");
    var e = assertThrows(MalformedDataException.class, () -> new CriteoReader(1000, 0).read(file));
    assertEquals(file + ":3: 39 tab-separated fields, expected 40 (label, 13 integer, 26 categorical)",
        e.getMessage());
  }

  @Test
  void badLabelsNumbersAndHexAreNamedWithTheirLine() throws Exception {
    Path file = dir.resolve("bad.tsv");
    Files.writeString(file, line("2", ints("1"), cats("aa")) + "\n");
    assertEquals(file + ":1: label '2' is not 0 or 1",
        assertThrows(MalformedDataException.class, () -> new CriteoReader(1000, 0).read(file)).getMessage());
    Files.writeString(file, line("1", ints("1.5"), cats("aa")) + "\n");
    assertEquals(file + ":1: integer feature 1 '1.5' is not an integer",
        assertThrows(MalformedDataException.class, () -> new CriteoReader(1000, 0).read(file)).getMessage());
    Files.writeString(file, "\n" + line("1", ints("1"), cats("xyz")) + "\n");
    assertEquals(file + ":2: categorical feature 1 'xyz' is not a hexadecimal value of at most 16 digits",
        assertThrows(MalformedDataException.class, () -> new CriteoReader(1000, 0).read(file)).getMessage());
  }
}
