package io.shardtrain.actors.master;

import java.util.ArrayList;
import java.util.List;

/** {@link BlockRequests} that only write down what they were asked, one line each. */
final class RecordingBlocks implements BlockRequests {
  final List<String> sent = new ArrayList<>();

  @Override
  public void updateMembership(String blockId, long epoch, List<String> members) {
    sent.add("membership " + blockId + " " + epoch + " " + members);
  }

  @Override
  public void updateTableMembership(String shardId, long epoch, List<String> members) {
    sent.add("table membership " + shardId + " " + epoch + " " + members);
  }

  @Override
  public void getTaskMark(String blockId, int epoch, int task, long generation) {
    sent.add("mark " + blockId + " " + epoch + "/" + task + " g" + generation);
  }

  @Override
  public void rollBack(String blockId, long step, long generation) {
    sent.add("rollback " + blockId + " " + step + " g" + generation);
  }

  /** What was sent since the last call. */
  List<String> take() {
    List<String> out = List.copyOf(sent);
    sent.clear();
    return out;
  }
}
