package io.shardtrain.actors.grpc;

import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.compute.backend.CpuBackend;
import io.shardtrain.grpc.SaveModelReply;
import io.shardtrain.grpc.SaveModelRequest;
import io.shardtrain.persistence.model.ModelFiles;
import io.shardtrain.persistence.model.ModelSnapshot;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The service's {@code SaveModel}: reads a job's model (an MLP from its blocks; a click-through
 * model from its blocks and table shards, once the job no longer trains) and writes it, and its
 * NumPy export when asked, on the service's blocking pool.
 */
final class ModelSaves {
  private final ShardTrain api;
  private final Executor blocking;
  private final Duration apiTimeout;
  private final Duration timeout;

  ModelSaves(ShardTrain api, Executor blocking, Duration apiTimeout, Duration timeout) {
    this.api = api;
    this.blocking = blocking;
    this.apiTimeout = apiTimeout;
    this.timeout = timeout;
  }

  CompletionStage<SaveModelReply> save(JobSpec job, SaveModelRequest in) {
    return read(job, in.getMinVersion()).thenApplyAsync(snapshot -> {
      try {
        ModelFiles.save(Path.of(in.getDir()), snapshot);
        if (!in.getNpyDir().isBlank()) ModelFiles.exportNpy(snapshot, Path.of(in.getNpyDir()));
      } catch (java.nio.file.FileSystemException e) {
        // The caller's path: a bad request, with the file system's reason, which the message lacks.
        throw ApiError.fail(new ApiError.BadRequest("cannot write the model to " + in.getDir() + ": "
            + ShardTrainGrpcService.reason(e)));
      } catch (IOException | RuntimeException e) {
        throw ApiError.fail(new ApiError.Internal("cannot write the model to " + in.getDir() + ": " + e.getMessage()));
      }
      return SaveModelReply.newBuilder().setJobId(job.jobId()).setVersion(snapshot.version())
          .setDir(Path.of(in.getDir()).toAbsolutePath().toString()).build();
    }, blocking);
  }

  private CompletionStage<ModelSnapshot> read(JobSpec job, long minVersion) {
    if (job.ctr() != null) {
      return ShardTrainGrpcService.answer(api.status(job.jobId()), "the master", timeout).thenCompose(s -> {
        if (!s.done()) {
          throw ApiError.fail(new ApiError.Refused("job " + job.jobId(), "it still trains; a click-through job's table"
              + " is saved once the job is done or cancelled (cancel-job stops it), when its rows no longer change"));
        }
        return ShardTrainGrpcService.answer(api.ctrModel(job), "the job's blocks and table shards", apiTimeout);
      });
    }
    var model = job.newModel(CpuBackend.create(1));
    // A sync job's blocks are read at one version; an async job's blocks count their own updates.
    CompletionStage<Long> read = job.mode() == io.shardtrain.actors.ps.BlockSpec.Mode.SYNC && minVersion == 0
        ? api.pullConsistent(model, job) : api.pullInto(model, job, minVersion);
    return ShardTrainGrpcService.answer(read, "the job's blocks", apiTimeout)
        .thenApply(version -> ShardTrain.snapshot(model, job, version));
  }
}
