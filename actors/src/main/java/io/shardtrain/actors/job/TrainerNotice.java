package io.shardtrain.actors.job;


/**
 * What the master tells a trainer unasked, on the reference the trainer registered with
 * ({@link JobProtocol.RegisterTrainer}).
 */
public sealed interface TrainerNotice extends CborSerializable permits TrainerNotice.RollBack {

  /** The job rolled back to the checkpoint at {@code step}; continue from there in {@code generation}. */
  record RollBack(long step, long generation) implements TrainerNotice {}
}
