package io.shardtrain.actors.ps;

/**
 * One block of a parameter: values {@code [offset, offset + length)} of {@code parameter}, the
 * {@code index}-th block of it. Its {@link #entityId()} names the shard entity that owns it.
 */
public record BlockSlice(String parameter, int index, int offset, int length) {
  public BlockSlice {
    if (parameter == null || parameter.isBlank()) {
      throw new IllegalArgumentException("block parameter name must not be blank");
    }
    if (index < 0) throw new IllegalArgumentException("block index must be >= 0, not " + index);
    if (offset < 0) throw new IllegalArgumentException("block offset must be >= 0, not " + offset);
    if (length < 1) throw new IllegalArgumentException("block length must be >= 1, not " + length);
  }

  /** The sharding entity id of this block: {@code parameter#index}. */
  public String entityId() {
    return entityId(parameter, index);
  }

  /** The sharding entity id of block {@code index} of {@code parameter}. */
  public static String entityId(String parameter, int index) {
    return parameter + "#" + index;
  }
}
