package io.shardtrain.samples.cli;

import io.shardtrain.samples.report.Json;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine;

/**
 * A {@code --report FILE} argument: the file's directory is made when the command line is read,
 * and a directory in the file's place, or a directory that takes no new file, is refused, so a
 * path that cannot hold a report is refused before the training or benchmark whose figures it
 * would keep, not after.
 */
final class ReportFile implements CommandLine.ITypeConverter<Path> {
  @Override
  public Path convert(String value) {
    Path file = Path.of(value);
    if (java.nio.file.Files.isDirectory(file)) {
      throw new CommandLine.TypeConversionException(value + " is a directory; give the report a file name in it,"
          + " such as " + file.resolve("report.json"));
    }
    try {
      Json.makeParent(file);
    } catch (IOException e) {
      throw new CommandLine.TypeConversionException("cannot make the directory for the report " + value + ": "
          + ShardTrainCli.describe(e));
    }
    try {
      // A directory that exists but takes no new file (read-only, immutable, /proc) fails here too.
      java.nio.file.Files.delete(java.nio.file.Files.createTempFile(file.toAbsolutePath().getParent(), ".report-",
          ".probe"));
    } catch (IOException e) {
      throw new CommandLine.TypeConversionException("cannot write the report " + value + ": "
          + ShardTrainCli.describe(e));
    }
    return file;
  }
}
