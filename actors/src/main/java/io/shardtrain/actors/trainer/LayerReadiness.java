package io.shardtrain.actors.trainer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which layers' forward can run while a pull round is still arriving: a layer once every block
 * holding its parameters (weights and bias) has arrived, and every layer before it has run, since
 * a layer's input is the previous layer's output. Each layer runs once.
 */
final class LayerReadiness {
  /** Per layer, the blocks of its parameters that have not arrived yet. */
  private final List<Set<String>> missing = new ArrayList<>();
  private int ran;

  /** {@code blocksByLayer.get(i)}: the blocks holding layer i's parameters. */
  LayerReadiness(List<List<String>> blocksByLayer) {
    for (List<String> blocks : blocksByLayer) {
      if (blocks.isEmpty()) throw new IllegalArgumentException("layer " + missing.size() + " has no blocks");
      missing.add(new HashSet<>(blocks));
    }
  }

  /** {@code block}'s values are in. */
  void arrived(String block) {
    for (Set<String> layer : missing) layer.remove(block);
  }

  /** The layers that can run now, in order, from the first that has not run; from now on counted as run. */
  List<Integer> takeRunnable() {
    List<Integer> runnable = new ArrayList<>();
    while (ran < missing.size() && missing.get(ran).isEmpty()) runnable.add(ran++);
    return runnable;
  }

  /** How many layers have run. */
  int ran() {
    return ran;
  }

  int layers() {
    return missing.size();
  }
}
