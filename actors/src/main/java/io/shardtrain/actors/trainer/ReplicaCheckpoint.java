package io.shardtrain.actors.trainer;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * An all-reduce ring's replica as of one step, on disk: what a member hands one behind it
 * ({@link RingLink.TransferEnd}'s counters and every member's task mark, and the replica's parts:
 * per parameter its values, then its optimizer slots), so a ring whose members all died starts
 * again from exactly those bits. One file, {@value #FILE}, in {@code <dir>/<job-id>/ring-step-<N>};
 * written to a temporary file and moved into place, so a directory that has the file has all of it.
 */
record ReplicaCheckpoint(RingLink.TransferEnd end, List<float[]> parts) {
  static final String FILE = "replica.bin";
  private static final int MAGIC = 0x53545243; // "STRC"
  private static final int VERSION = 1;
  private static final String PREFIX = "ring-step-";

  ReplicaCheckpoint {
    if (parts.size() != end.parts()) {
      throw new IllegalArgumentException("a replica of " + end.parts() + " parts, not " + parts.size());
    }
    parts = List.copyOf(parts);
  }

  /** Where job {@code jobId}'s checkpoint after step {@code step} goes under {@code root}. */
  static Path dir(Path root, String jobId, long step) {
    return root.resolve(jobId).resolve(PREFIX + step);
  }

  long step() {
    return end.step();
  }

  /** Writes this checkpoint into {@code dir}, then deletes the job's older checkpoints but two. */
  void write(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path tmp = dir.resolve(FILE + ".tmp");
    try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16))) {
      out.writeInt(MAGIC);
      out.writeInt(VERSION);
      out.writeLong(end.epoch());
      out.writeLong(end.step());
      out.writeLong(end.examplesApplied());
      out.writeLong(end.updates());
      out.writeBoolean(end.leaving());
      out.writeInt(end.markTrainers().size());
      for (String t : end.markTrainers()) out.writeUTF(t);
      out.writeInt(end.marks().length);
      for (long m : end.marks()) out.writeLong(m);
      out.writeInt(parts.size());
      for (float[] p : parts) {
        out.writeInt(p.length);
        for (float v : p) out.writeInt(Float.floatToRawIntBits(v));
      }
    }
    Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    prune(dir.getParent(), end.step());
  }

  /** The checkpoint in {@code dir}. */
  static ReplicaCheckpoint read(Path dir) throws IOException {
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(dir.resolve(FILE)),
        1 << 16))) {
      if (in.readInt() != MAGIC) throw new IOException(dir.resolve(FILE) + " is not a replica checkpoint");
      int version = in.readInt();
      if (version != VERSION) throw new IOException(dir.resolve(FILE) + ": unknown version " + version);
      long epoch = in.readLong();
      long step = in.readLong();
      long examples = in.readLong();
      long updates = in.readLong();
      boolean leaving = in.readBoolean();
      List<String> trainers = new ArrayList<>();
      for (int i = in.readInt(); i > 0; i--) trainers.add(in.readUTF());
      long[] marks = new long[in.readInt()];
      for (int i = 0; i < marks.length; i++) marks[i] = in.readLong();
      int n = in.readInt();
      List<float[]> parts = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        float[] p = new float[in.readInt()];
        for (int j = 0; j < p.length; j++) p[j] = Float.intBitsToFloat(in.readInt());
        parts.add(p);
      }
      return new ReplicaCheckpoint(new RingLink.TransferEnd(epoch, step, n, examples, updates, leaving, trainers, marks),
          parts);
    }
  }

  /**
   * Keeps the checkpoint of {@code newest} and the two before it under {@code jobDir} (the master
   * may not have committed the newest yet, nor, its notice lost, the one before); deletes older ones.
   */
  private static void prune(Path jobDir, long newest) throws IOException {
    List<Long> older = new ArrayList<>();
    try (Stream<Path> dirs = Files.list(jobDir)) {
      dirs.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(PREFIX)).forEach(n -> {
        try {
          long step = Long.parseLong(n.substring(PREFIX.length()));
          if (step < newest) older.add(step);
        } catch (NumberFormatException e) {
          // Not one of ours.
        }
      });
    }
    older.sort(Comparator.reverseOrder());
    for (long step : older.subList(Math.min(2, older.size()), older.size())) {
      Path d = jobDir.resolve(PREFIX + step);
      Files.deleteIfExists(d.resolve(FILE));
      Files.deleteIfExists(d.resolve(FILE + ".tmp"));
      Files.deleteIfExists(d);
    }
  }
}
