package io.shardtrain.actors.job;


/**
 * What the master tells a trainer unasked, on the reference the trainer registered with
 * ({@link JobProtocol.RegisterTrainer}).
 */
public sealed interface TrainerNotice extends CborSerializable permits TrainerNotice.RollBack, TrainerNotice.MembersChanged,
    TrainerNotice.Cancelled {

  /** The job rolled back to the checkpoint at {@code step}; continue from there in {@code generation}. */
  record RollBack(long step, long generation) implements TrainerNotice {}

  /** All-reduce: the job's trainers are {@code members} from membership epoch {@code epoch} on; the ring re-forms. */
  record MembersChanged(long epoch, java.util.List<String> members) implements TrainerNotice {}

  /** Job {@code jobId} was cancelled: finish the step in progress, report it and leave the job. */
  record Cancelled(String jobId) implements TrainerNotice {}
}
