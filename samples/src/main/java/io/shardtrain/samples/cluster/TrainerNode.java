package io.shardtrain.samples.cluster;

import akka.actor.typed.ActorRef;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.CtrSettings;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.trainer.CtrTrainer;
import io.shardtrain.actors.trainer.StepListener;
import io.shardtrain.actors.trainer.Trainer;
import io.shardtrain.actors.trainer.TrainerSettings;
import io.shardtrain.compute.backend.Backends;
import io.shardtrain.samples.local.CtrData;
import io.shardtrain.samples.local.DataSets;
import java.io.PrintStream;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The trainer of a {@code trainer} node: waits for a job, loads that job's data set, and trains
 * under a stable id (a restarted node resumes where its task stopped); then waits for the next job.
 * Given a job id it joins that job only.
 */
public final class TrainerNode {
  private TrainerNode() {}

  /** Trains the cluster's jobs one after another; completes with the first job's step count. */
  public static CompletableFuture<Long> start(ShardTrain api, String trainerId, TrainSettings settings,
      PrintStream log) {
    return start(api, trainerId, settings, log, null);
  }

  /**
   * Trains job {@code jobId} (null: each running job the cluster has, oldest first, one after
   * another, waiting for the next when none is left); completes with the first job's step count.
   */
  public static CompletableFuture<Long> start(ShardTrain api, String trainerId, TrainSettings settings,
      PrintStream log, String jobId) {
    CompletableFuture<Long> first = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      Set<String> trained = new HashSet<>();
      try {
        do {
          JobProtocol.JobStatus status = awaitJob(api, trainerId, jobId, trained, log);
          trained.add(status.jobId());
          CompletableFuture<Long> finished = new CompletableFuture<>();
          try {
            train(api, trainerId, settings, log, status, listener(log, finished,
                () -> akka.actor.CoordinatedShutdown.get(api.system()).getShutdownReason().isPresent()));
            first.complete(finished.get());
          } catch (ExecutionException e) {
            // The listener printed why; a job that failed here is not taken again, the next one is.
            first.completeExceptionally(e.getCause());
          } catch (InterruptedException e) {
            throw e;
          } catch (Exception e) {
            log.printf("trainer %s: cannot train job %s: %s%n", trainerId, status.jobId(), e.getMessage());
            first.completeExceptionally(e);
          }
        } while (jobId == null);
      } catch (InterruptedException e) {
        first.completeExceptionally(e);
      }
    }, "shardtrain-trainer-node");
    t.setDaemon(true);
    t.start();
    return first;
  }

  private static void train(ShardTrain api, String trainerId, TrainSettings settings, PrintStream log,
      JobProtocol.JobStatus status, StepListener listener) throws Exception {
    String dataset = status.job().dataset();
    ActorRef<JobProtocol.Command> master = api.master(status.jobId());
    if (status.job().ctr() != null) {
      // The job's fingerprint tells the trainer whether these are the examples it was planned on.
      CtrData data = CtrData.load(dataset, CtrSettings.fromConfig(api.system().settings().config()),
          status.job().seed());
      log.printf("trainer %s: click-through job %s, data set %s%n", trainerId, status.jobId(), dataset);
      api.startTrainer(new CtrTrainer.Setup(trainerId, master, data.train(), data.test(),
          TrainerSettings.create(api.system()), listener));
      return;
    }
    // The dense kernels compile while the data is read.
    Backends.warmUp(settings.backend());
    DataSets.TrainTest data = DataSets.load(dataset, settings.dataDir());
    log.printf("trainer %s: job %s, data set %s%n", trainerId, status.jobId(), dataset);
    int threads = settings.computeThreads();
    String backend = settings.backend();
    api.startTrainer(new Trainer.Setup(trainerId, master, data.train(), data.test(),
        () -> Backends.create(backend, threads).backend(), TrainerSettings.create(api.system()), listener));
  }

  /**
   * Prints a step now and then, the resumption, and the end ({@code leaving}: whether the node is
   * stopping, which ended it); completes {@code finished}.
   */
  private static StepListener listener(PrintStream log, CompletableFuture<Long> finished,
      java.util.function.BooleanSupplier leaving) {
    return new StepListener() {
      private long last = System.nanoTime();

      @Override
      public void onStep(String id, long step, float loss, int examples, long computeNanos) {
        long now = System.nanoTime();
        if (now - last > 5_000_000_000L) {
          log.printf("trainer %s: step %d, loss %.4f%n", id, step, loss);
          last = now;
        }
      }

      @Override
      public void onResumed(String id, int epoch, int task, long offset, long step, long version) {
        // Printed, not logged: an operator restarting a trainer looks for this line at any log level.
        // A first start at the beginning of a task resumes nothing.
        if (step == 0 && offset == 0) return;
        log.printf("trainer %s resumes task %d/%d at offset %d after step %d (parameters pulled at version %d)%n",
            id, epoch, task, offset, step, version);
      }

      @Override
      public void onFinished(String id, long steps, long pushes, long pulls, long stale) {
        // A node that stops takes its trainer out of the job, which goes on: not "finished".
        String how = leaving.getAsBoolean() ? "left the job (its node is stopping) after" : "finished:";
        log.printf("trainer %s %s %d steps, %d pushes, %d pulls%n", id, how, steps, pushes, pulls);
        finished.complete(steps);
      }

      @Override
      public void onFailed(String id, String reason) {
        log.printf("trainer %s failed: %s%n", id, reason);
        finished.completeExceptionally(new IllegalStateException(reason));
      }
    };
  }

  /**
   * The status of job {@code jobId} once submitted; null: of the oldest running job not in
   * {@code trained} and not done (which it adds to {@code trained}).
   */
  private static JobProtocol.JobStatus awaitJob(ShardTrain api, String trainerId, String jobId, Set<String> trained,
      PrintStream log) throws InterruptedException {
    boolean told = false;
    while (true) {
      try {
        String id = jobId != null ? jobId : api.jobs().toCompletableFuture().get(10, TimeUnit.SECONDS).stream()
            .filter(j -> j.running() && !trained.contains(j.jobId())).map(JobProtocol.JobEntry::jobId)
            .findFirst().orElse(null);
        if (id != null) {
          JobProtocol.JobStatus s = api.status(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
          // A job whose data is all trained needs no new trainer: one that joined would only wake its blocks.
          if (s.submitted() && s.done() && jobId == null) trained.add(id);
          else if (s.submitted()) return s;
          else if (!told) {
            // Printed once: a misspelt --join otherwise waits without a word.
            log.printf("trainer %s: no job %s on the cluster yet (jobs: %s); waiting for it%n", trainerId, id,
                jobNames(api));
            told = true;
          }
        }
      } catch (ExecutionException | TimeoutException e) {
        // The master singleton is still starting or moving: ask again.
      }
      Thread.sleep(1000);
    }
  }

  private static String jobNames(ShardTrain api) throws ExecutionException, InterruptedException, TimeoutException {
    var jobs = api.jobs().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return jobs.isEmpty() ? "none" : String.join(", ", jobs.stream().map(JobProtocol.JobEntry::jobId).toList());
  }
}
