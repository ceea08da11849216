package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.DispatcherSelector;
import akka.actor.typed.javadsl.AskPattern;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.pattern.StatusReply;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.compute.nn.Mlp;
import io.shardtrain.compute.nn.Parameter;
import io.shardtrain.persistence.model.Checkpoint;
import io.shardtrain.persistence.model.CheckpointFiles;
import io.shardtrain.persistence.model.ModelFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.LongFunction;
import org.slf4j.Logger;

/**
 * Takes one globally consistent checkpoint for the {@link Master}: picks a sync step a little ahead
 * of the blocks, has every block capture its state at exactly that step, reads the captures, asks
 * the master for its reader offsets at that step, and writes the checkpoint directory
 * (docs/MODEL-FORMAT.md). A plain helper of futures, not an actor: the master pipes its result
 * back to itself and commits it.
 */
final class CheckpointTaker {
  /** Steps between the blocks' newest version and the target: the request must arrive before the step is applied. */
  private static final long LEAD = 2;
  private static final int ATTEMPTS = 3;

  private final ActorSystem<?> system;
  private final ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks;
  private final CheckpointSettings settings;
  private final Duration askTimeout;
  private final Executor blockingIo;
  private final Logger log;

  CheckpointTaker(ActorSystem<?> system, ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks,
      CheckpointSettings settings, Duration askTimeout) {
    this.system = system;
    this.blocks = blocks;
    this.settings = settings;
    this.askTimeout = askTimeout;
    this.blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
    this.log = system.log();
  }

  /**
   * Takes a checkpoint of {@code job} and writes it to {@code dir} (null: the configured directory).
   * {@code periodic}: the step is the next multiple of {@code shardtrain.checkpoint.every-steps}.
   * {@code jobDone}: the blocks are still, so the step is their version; {@code cancelled}: the
   * trainers finish the step they are in, which some blocks may still be applying, so the step is
   * their newest version. Checkpoints older than {@code keepFrom} may be dropped by the blocks;
   * {@code offsets} gives the master's state at a step.
   */
  CompletionStage<MasterState.CommittedCheckpoint> take(JobSpec job, boolean periodic, boolean jobDone,
      boolean cancelled, long keepFrom, Path dir, LongFunction<CompletionStage<MasterState.CommittedCheckpoint>> offsets) {
    if (dir == null) return attempt(job, periodic, jobDone, cancelled, keepFrom, null, offsets, 1);
    // A directory the caller named holds nothing of ours: refused before the blocks capture anything.
    return CompletableFuture.runAsync(() -> {
      try {
        ModelFiles.checkSavable(dir);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("cannot write the checkpoint to " + dir + ": "
            + (e instanceof java.nio.file.FileSystemException f ? io.shardtrain.compute.FileTrees.reason(f) : e.getMessage()), e);
      }
    }, blockingIo).thenCompose(x -> attempt(job, periodic, jobDone, cancelled, keepFrom, dir, offsets, 1));
  }

  private CompletionStage<MasterState.CommittedCheckpoint> attempt(JobSpec job, boolean periodic, boolean jobDone,
      boolean cancelled, long keepFrom, Path dir, LongFunction<CompletionStage<MasterState.CommittedCheckpoint>> offsets,
      int attempt) {
    return versions(job).thenCompose(v -> {
      long min = v.stream().mapToLong(Long::longValue).min().orElse(0);
      long max = v.stream().mapToLong(Long::longValue).max().orElse(0);
      long step;
      if (jobDone && cancelled) {
        step = max;
      } else if (jobDone && job.steps() > 0) {
        // Sync steps are the job's: done means a trainer reported the last step, whose barrier
        // some blocks may still be completing; the capture waits for it there.
        step = job.steps();
      } else if (jobDone) {
        if (min != max) {
          throw new IllegalStateException("the job is done but its blocks are at versions " + min + " to " + max);
        }
        step = max;
      } else {
        long every = periodic ? settings.everySteps() : 1;
        long ahead = ((max + LEAD * attempt + every - 1) / every) * every;
        // A step-bounded job never reaches a step past its last: checkpoint that one instead.
        step = job.steps() > 0 ? Math.max(max, Math.min(ahead, job.steps())) : ahead;
      }
      return capture(job, step, keepFrom)
          .thenCompose(captured -> read(job, step, captured))
          .thenCompose(values -> offsets.apply(step).thenCompose(master -> {
            Path target = dir != null ? dir : settings.defaultDir(job.jobId(), step);
            Checkpoint checkpoint = assemble(job, step, values, master);
            return CompletableFuture.supplyAsync(() -> {
              try {
                // The default directory is the step's own: a job done checkpoints its last step there again.
                CheckpointFiles.save(target, checkpoint, dir != null ? ModelFiles.IfExists.FAIL : ModelFiles.IfExists.REPLACE);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("writing checkpoint " + target + ": " + e.getMessage(), e);
              }
              return new MasterState.CommittedCheckpoint(step, target.toAbsolutePath().toString(), master.offsets(),
                  master.epochsDone(), master.examples(), master.trainerSteps());
            }, blockingIo);
          }))
          .exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
            // A block already past the step (the job moved faster than the request): aim further ahead.
            if (attempt < ATTEMPTS && !jobDone && String.valueOf(cause.getMessage()).contains("past checkpoint step")) {
              return attempt(job, periodic, false, false, keepFrom, dir, offsets, attempt + 1);
            }
            return CompletableFuture.failedFuture(cause);
          });
    });
  }

  private CompletionStage<List<Long>> versions(JobSpec job) {
    List<CompletableFuture<BlockProtocol.BlockStats>> stats = new ArrayList<>();
    for (String id : job.blocks()) {
      stats.add(AskPattern.<ShardingEnvelope<BlockProtocol.Command>, BlockProtocol.BlockStats>ask(blocks,
          r -> new ShardingEnvelope<>(id, new BlockProtocol.GetStats(r)), askTimeout, system.scheduler())
          .toCompletableFuture());
    }
    return allOrFirstFailure(stats).thenApply(x -> stats.stream().map(f -> f.join().version()).toList());
  }

  private CompletionStage<Map<String, BlockProtocol.Captured>> capture(JobSpec job, long step, long keepFrom) {
    Map<String, CompletableFuture<BlockProtocol.Captured>> captures = new LinkedHashMap<>();
    for (String id : job.blocks()) {
      captures.put(id, AskPattern.<ShardingEnvelope<BlockProtocol.Command>, StatusReply<BlockProtocol.Captured>>ask(
              blocks, r -> new ShardingEnvelope<>(id, new BlockProtocol.Checkpoint(step, keepFrom, r)),
              settings.timeout(), system.scheduler())
          .thenApply(StatusReply::getValue).toCompletableFuture());
    }
    return allOrFirstFailure(List.copyOf(captures.values())).thenApply(x -> {
      Map<String, BlockProtocol.Captured> out = new LinkedHashMap<>();
      captures.forEach((id, f) -> out.put(id, f.join()));
      return out;
    });
  }

  /** Per block: its captured values (part 0) and slots, and its capture. */
  private record BlockState(BlockProtocol.Captured captured, List<BlockProtocol.BlockValues> parts) {}

  private CompletionStage<List<BlockState>> read(JobSpec job, long step, Map<String, BlockProtocol.Captured> captured) {
    List<CompletableFuture<BlockState>> reads = new ArrayList<>();
    for (Map.Entry<String, BlockProtocol.Captured> e : captured.entrySet()) {
      List<CompletableFuture<BlockProtocol.BlockValues>> parts = new ArrayList<>();
      for (int part = 0; part <= e.getValue().slots(); part++) {
        int p = part;
        parts.add(AskPattern.<ShardingEnvelope<BlockProtocol.Command>, StatusReply<BlockProtocol.BlockValues>>ask(
                blocks, r -> new ShardingEnvelope<>(e.getKey(), new BlockProtocol.ReadCheckpoint(step, p, r)),
                settings.timeout(), system.scheduler())
            .thenApply(StatusReply::getValue).toCompletableFuture());
      }
      reads.add(allOrFirstFailure(parts)
          .thenApply(x -> new BlockState(e.getValue(), parts.stream().map(CompletableFuture::join).toList())));
    }
    return allOrFirstFailure(reads).thenApply(x -> reads.stream().map(CompletableFuture::join).toList());
  }

  /**
   * Completes when all {@code futures} did, or with the first failure: a block of a lost node
   * never answers, and the blocks that rolled back already said so.
   */
  private static CompletableFuture<Void> allOrFirstFailure(List<? extends CompletableFuture<?>> futures) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).whenComplete((x, e) -> {
      if (e == null) result.complete(null);
    });
    for (CompletableFuture<?> f : futures) {
      f.whenComplete((x, e) -> {
        if (e != null) result.completeExceptionally(e);
      });
    }
    return result;
  }

  private Checkpoint assemble(JobSpec job, long step, List<BlockState> blockStates,
      MasterState.CommittedCheckpoint master) {
    Mlp model = job.newModel(CpuBackend.create(1));
    Map<String, Parameter> byName = new HashMap<>();
    for (Parameter p : model.parameters()) byName.put(p.name(), p);
    Map<String, float[][]> slots = new LinkedHashMap<>();
    ParameterCounts counts = new ParameterCounts();
    for (BlockState b : blockStates) {
      BlockProtocol.BlockValues values = b.parts().get(0);
      Parameter p = byName.get(values.parameter());
      if (p == null) throw new IllegalStateException("block of unknown parameter " + values.parameter());
      System.arraycopy(values.values(), 0, p.value().data(), values.offset(), values.values().length);
      float[][] s = slots.computeIfAbsent(p.name(), k -> new float[b.captured().slots()][p.size()]);
      if (s.length != b.captured().slots()) {
        throw new IllegalStateException("blocks of " + p.name() + " disagree on the number of optimizer slots");
      }
      for (int k = 0; k < s.length; k++) {
        float[] part = b.parts().get(k + 1).values();
        System.arraycopy(part, 0, s[k], values.offset(), part.length);
      }
      counts.add(p.name(), b.captured().updates(), b.captured().examples());
    }
    List<String> disagreements = counts.disagreements();
    if (!disagreements.isEmpty()) {
      log.warn("checkpoint at step {}: blocks of one parameter applied different counts, the largest kept: {}", step,
          disagreements);
    }
    List<Checkpoint.Slots> slotList = new ArrayList<>();
    for (Parameter p : model.parameters()) {
      float[][] s = slots.get(p.name());
      if (s == null) throw new IllegalStateException("no block of parameter " + p.name() + " answered");
      slotList.add(new Checkpoint.Slots(p.name(), counts.updates(p.name()), counts.examples(p.name()), List.of(s)));
    }
    List<Checkpoint.ReaderOffset> offsets = new ArrayList<>();
    for (MasterState.TaskOffset o : master.offsets()) {
      offsets.add(new Checkpoint.ReaderOffset(o.epoch(), o.task(), o.offset()));
    }
    return new Checkpoint(job.snapshot(model, step), slotList, offsets, master.epochsDone());
  }
}
