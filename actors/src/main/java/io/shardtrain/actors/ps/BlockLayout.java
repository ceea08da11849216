package io.shardtrain.actors.ps;

import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Cuts parameters into blocks of at most {@code blockSize} floats, in order: block {@code i} of a
 * parameter starts at {@code i * blockSize}, and only its last block may be shorter. Trainers and
 * the master compute the same layout from the same shapes, so no one has to ship it around.
 */
public final class BlockLayout {
  private BlockLayout() {}

  /**
   * The blocks of {@code model}'s parameters, in the model's order: the one way a job's blocks are
   * derived from its model, by whoever plans the job, places its blocks, trains or reads it back.
   */
  public static List<BlockSlice> of(Mlp model, int blockSize, String job) {
    List<ParamShape> shapes = new ArrayList<>();
    for (Parameter p : model.parameters()) shapes.add(new ParamShape(p.name(), p.size()));
    return of(shapes, blockSize, job);
  }

  /** The blocks of every parameter outside any job's namespace. */
  public static List<BlockSlice> of(List<ParamShape> parameters, int blockSize) {
    return of(parameters, blockSize, "");
  }

  /**
   * The blocks of every parameter, parameter by parameter, each parameter covered exactly once, in
   * the namespace of job {@code job} ("": none).
   */
  public static List<BlockSlice> of(List<ParamShape> parameters, int blockSize, String job) {
    if (parameters == null) throw new IllegalArgumentException("parameter list must not be null");
    if (blockSize < 1) throw new IllegalArgumentException("block size must be >= 1 float, not " + blockSize);
    List<BlockSlice> blocks = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (ParamShape p : parameters) {
      if (p == null) throw new IllegalArgumentException("parameter list holds a null entry");
      if (!seen.add(p.name())) {
        throw new IllegalArgumentException("parameter '" + p.name() + "' is listed twice");
      }
      int index = 0;
      for (long offset = 0; offset < p.size(); offset += blockSize, index++) {
        int length = (int) Math.min(blockSize, p.size() - offset);
        blocks.add(new BlockSlice(job, p.name(), index, (int) offset, length));
      }
    }
    return List.copyOf(blocks);
  }
}
