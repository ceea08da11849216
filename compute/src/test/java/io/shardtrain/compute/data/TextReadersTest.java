package io.shardtrain.compute.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TextReadersTest {
  @TempDir Path dir;

  private Path file(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content);
  }

  @Test
  void csvWithHeaderAndNamedLabelColumnSplitsFeaturesFromClassLabels() throws Exception {
    Path f = file("a.csv", "x1,label,x2\n0.5,2,-1\n\n1.5,0,\"3\"\n");
    Dataset d = CsvReader.create().withLabelColumn("label").read(f);
    assertEquals(2, d.size());
    assertEquals(2, d.dim());
    assertEquals(3, d.numClasses());
    assertArrayEquals(new float[] {0.5f, -1f}, d.row(0));
    assertArrayEquals(new float[] {1.5f, 3f}, d.row(1));
    assertEquals(2, d.label(0));
    assertEquals(0, d.label(1));
  }

  @Test
  void csvWithoutHeaderUsesLastColumnAndCanReadTargets() throws Exception {
    Path f = file("b.csv", "1;2;0.25\r\n3;4;-7.5\r\n");
    Dataset d = CsvReader.create().withDelimiter(';').withTargets().read(f);
    assertFalse(d.isClassification());
    assertEquals(0, d.numClasses());
    assertArrayEquals(new float[] {3f, 4f}, d.row(1));
    assertEquals(0.25f, d.target(0));
    assertEquals(-7.5f, d.target(1));
    Dataset first = CsvReader.create().withDelimiter(';').withLabelColumn(0).withTargets().read(f);
    assertArrayEquals(new float[] {2f, 0.25f}, first.row(0));
    assertEquals(3f, first.target(1));
  }

  @Test
  void csvMalformedValueNamesFileLineAndColumn() throws Exception {
    Path f = file("bad.csv", "a,b,y\n1,2,0\n1,x2,1\n");
    MalformedDataException e = assertThrows(MalformedDataException.class,
        () -> CsvReader.create().withHeader(true).read(f));
    assertEquals(f + ":3: column 2 value 'x2' is not a number", e.getMessage());
  }

  @Test
  void csvRowOfWrongWidthAndNonIntegerClassAreRejectedWithLineNumbers() throws Exception {
    Path wide = file("wide.csv", "1,2,0\n1,2,3,1\n");
    assertEquals(wide + ":2: 4 columns, expected 3",
        assertThrows(MalformedDataException.class, () -> CsvReader.create().read(wide)).getMessage());
    Path frac = file("frac.csv", "1,2,0\n1,2,0.5\n");
    assertTrue(assertThrows(MalformedDataException.class, () -> CsvReader.create().read(frac)).getMessage()
        .startsWith(frac + ":2: label '0.5' is not a class id"));
    Path big = file("big.csv", "1,2,0\n1,2,4\n");
    assertTrue(assertThrows(MalformedDataException.class, () -> CsvReader.create().withClasses(3).read(big))
        .getMessage().startsWith(big + ":2: label '4' is not a class id in [0, 3)"));
    Path noCol = file("nocol.csv", "a,b\n1,2\n");
    assertEquals(noCol + ":1: the header has no column named 'y'",
        assertThrows(MalformedDataException.class, () -> CsvReader.create().withLabelColumn("y").read(noCol))
            .getMessage());
  }

  @Test
  void libSvmReadsSparseOneBasedRowsDenselyAndMapsPlusMinusOneToClasses() throws Exception {
    Path f = file("a.svm", "+1 1:0.5 4:2 # comment\n-1 qid:3 2:1.5\n\n+1\n");
    Dataset d = LibSvmReader.create().read(f);
    assertEquals(3, d.size());
    assertEquals(4, d.dim());
    assertEquals(2, d.numClasses());
    assertArrayEquals(new float[] {0.5f, 0f, 0f, 2f}, d.row(0));
    assertArrayEquals(new float[] {0f, 1.5f, 0f, 0f}, d.row(1));
    assertArrayEquals(new float[] {0f, 0f, 0f, 0f}, d.row(2));
    assertArrayEquals(new int[] {1, 0, 1}, new int[] {d.label(0), d.label(1), d.label(2)});
  }

  @Test
  void libSvmHonoursGivenDimZeroBasedIndicesAndLabelKinds() throws Exception {
    Path f = file("b.svm", "-1 0:1 2:3\n1 1:2\n");
    Dataset d = LibSvmReader.create().withOneBasedIndices(false).withDim(5)
        .withLabels(LibSvmReader.LabelKind.BINARY).read(f);
    assertEquals(5, d.dim());
    assertArrayEquals(new float[] {1f, 0f, 3f, 0f, 0f}, d.row(0));
    assertEquals(0f, d.target(0));
    assertEquals(1f, d.target(1));
    Dataset raw = LibSvmReader.create().withOneBasedIndices(false)
        .withLabels(LibSvmReader.LabelKind.TARGETS).read(f);
    assertEquals(-1f, raw.target(0));
    Path multi = file("m.svm", "0 1:1\n3 2:1\n2 1:4\n");
    Dataset m = LibSvmReader.create().read(multi);
    assertEquals(4, m.numClasses());
    assertEquals(3, m.label(1));
  }

  @Test
  void libSvmMalformedTokensNameFileAndLine() throws Exception {
    Path f = file("bad.svm", "1 1:0.5\n0 2:1 3=4\n");
    assertEquals(f + ":2: '3=4' is not index:value",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(f)).getMessage());
    Path zero = file("zero.svm", "1 0:1\n");
    assertEquals(zero + ":1: index 0 is below 1 (indices are 1-based)",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(zero)).getMessage());
    Path wide = file("wide.svm", "1 1:1\n1 9:1\n");
    assertEquals(wide + ":2: index 9 is beyond dim 4",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().withDim(4).read(wide)).getMessage());
    Path label = file("label.svm", "1 1:1\nyes 1:1\n");
    assertEquals(label + ":2: label 'yes' is not a number",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(label)).getMessage());
    Path notBinary = file("nb.svm", "1 1:1\n\n2 1:1\n");
    assertEquals(notBinary + ":3: label 2.0 is not a binary label (-1, 0 or +1)",
        assertThrows(MalformedDataException.class,
            () -> LibSvmReader.create().withLabels(LibSvmReader.LabelKind.BINARY).read(notBinary)).getMessage());
  }

  @Test
  void bytesThatAreNotUtf8AreAContentErrorNamingFileAndLine() throws Exception {
    Path f = dir.resolve("latin1.csv");
    Files.write(f, new byte[] {'1', ',', '0', '\n', '2', (byte) 0xe9, ',', '1', '\n'});
    assertTrue(assertThrows(MalformedDataException.class, () -> CsvReader.create().read(f)).getMessage()
        .startsWith(f + ":1: not UTF-8 text at or after this line"));
    Path svm = dir.resolve("latin1.svm");
    Files.write(svm, new byte[] {'1', ' ', '1', ':', (byte) 0xe9});
    assertTrue(assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(svm)).getMessage()
        .startsWith(svm + ":1: not UTF-8 text"));
  }

  @Test
  void classIdBeyondTheClassLimitIsRefusedRatherThanOverflowingTheClassCount() throws Exception {
    Path csv = file("big-label.csv", "1,2,0\n3,4,2147483648\n");
    assertEquals(csv + ":2: label '2147483648' is not a class id in [0, 16777216)",
        assertThrows(MalformedDataException.class, () -> CsvReader.create().read(csv)).getMessage());
    Path svm = file("big-label.svm", "2 1:1\n4294967296 1:1\n");
    assertEquals(svm + ":2: label 4.2949673E9 is not a class id in [0, 16777216)",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(svm)).getMessage());
  }

  @Test
  void libSvmIndexThatWouldMakeHugeDenseRowsIsRefusedBeforeAllocating() throws Exception {
    Path f = file("wide.svm", "1 1:1\n0 2000000000:1\n");
    assertEquals(f + ":2: index 2000000000 makes the width 2000000000, and 2 rows of width 2000000000 are"
        + " 4000000000 dense values, more than the limit of 268435456 (withMaxValues)",
        assertThrows(MalformedDataException.class, () -> LibSvmReader.create().read(f)).getMessage());
    Dataset ok = LibSvmReader.create().withMaxValues(2000).read(file("ok.svm", "1 1000:1\n0 1:1\n"));
    assertEquals(1000, ok.dim());
    assertEquals(1f, ok.feature(0, 999));
  }
}
