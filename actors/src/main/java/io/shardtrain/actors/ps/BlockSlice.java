package io.shardtrain.actors.ps;

/**
 * One block of a parameter: values {@code [offset, offset + length)} of {@code parameter}, the
 * {@code index}-th block of it, in the namespace of job {@code job}. Its {@link #entityId()} names
 * the shard entity that owns it; the job in it keeps the blocks of two jobs on one journal apart.
 */
public record BlockSlice(String job, String parameter, int index, int offset, int length) {
  public BlockSlice {
    if (job == null) throw new IllegalArgumentException("block job must not be null (\"\": no job namespace)");
    if (parameter == null || parameter.isBlank()) {
      throw new IllegalArgumentException("block parameter name must not be blank");
    }
    if (index < 0) throw new IllegalArgumentException("block index must be >= 0, not " + index);
    if (offset < 0) throw new IllegalArgumentException("block offset must be >= 0, not " + offset);
    if (length < 1) throw new IllegalArgumentException("block length must be >= 1, not " + length);
  }

  /** A block outside any job's namespace (benchmarks and tests of one block). */
  public BlockSlice(String parameter, int index, int offset, int length) {
    this("", parameter, index, offset, length);
  }

  /** The sharding entity id of this block: {@code job/parameter#index}, or {@code parameter#index} without a job. */
  public String entityId() {
    return entityId(job, parameter, index);
  }

  /** The sharding entity id of block {@code index} of {@code parameter} outside any job's namespace. */
  public static String entityId(String parameter, int index) {
    return parameter + "#" + index;
  }

  /** The sharding entity id of block {@code index} of {@code parameter} of job {@code job}. */
  public static String entityId(String job, String parameter, int index) {
    return job.isEmpty() ? entityId(parameter, index) : job + "/" + entityId(parameter, index);
  }

  /** Whether entity {@code entityId} is block {@code index} of {@code parameter}, in whichever job's namespace. */
  public static boolean names(String entityId, String parameter, int index) {
    String local = entityId(parameter, index);
    return entityId.equals(local) || entityId.endsWith("/" + local);
  }
}
