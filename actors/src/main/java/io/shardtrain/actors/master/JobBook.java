package io.shardtrain.actors.master;

import io.shardtrain.actors.job.JobProtocol.JobEntry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The jobs of a cluster, oldest first, as {@link JobDirectory} journals them. A job is running from
 * its submit until its master finds it done, then finished; a finished job's journal may be
 * deleted. A deleted job's id stays taken: blocks of it that were still in memory when their
 * journal went could otherwise be found by a new job of that id.
 */
final class JobBook {
  enum Stage { RUNNING, FINISHED, DELETED }

  private final Map<String, Stage> jobs = new LinkedHashMap<>();
  private final Set<String> cancelled = new HashSet<>();

  JobBook opened(String jobId) {
    jobs.put(jobId, Stage.RUNNING);
    return this;
  }

  JobBook finished(String jobId) {
    return finished(jobId, false);
  }

  /** Job {@code jobId} finished, {@code cancelled} before its last step or epoch. */
  JobBook finished(String jobId, boolean cancelled) {
    if (jobs.get(jobId) != Stage.RUNNING) return this;
    jobs.put(jobId, Stage.FINISHED);
    if (cancelled) this.cancelled.add(jobId);
    return this;
  }

  JobBook deleted(String jobId) {
    jobs.computeIfPresent(jobId, (k, v) -> Stage.DELETED);
    return this;
  }

  /** The job's stage; null for an id never submitted. */
  Stage stage(String jobId) {
    return jobs.get(jobId);
  }

  /**
   * The job a command that names none is for: the newest running one, else the newest finished one
   * (whose status still answers); null when there is neither.
   */
  String current() {
    String newestFinished = null;
    String newestRunning = null;
    for (Map.Entry<String, Stage> e : jobs.entrySet()) {
      if (e.getValue() == Stage.RUNNING) newestRunning = e.getKey();
      if (e.getValue() == Stage.FINISHED) newestFinished = e.getKey();
    }
    return newestRunning != null ? newestRunning : newestFinished;
  }

  List<String> running() {
    List<String> ids = new ArrayList<>();
    jobs.forEach((id, stage) -> {
      if (stage == Stage.RUNNING) ids.add(id);
    });
    return ids;
  }

  /** The jobs not deleted, oldest first. */
  List<JobEntry> entries() {
    List<JobEntry> entries = new ArrayList<>();
    jobs.forEach((id, stage) -> {
      if (stage != Stage.DELETED) entries.add(new JobEntry(id, stage == Stage.RUNNING, cancelled.contains(id)));
    });
    return entries;
  }
}
