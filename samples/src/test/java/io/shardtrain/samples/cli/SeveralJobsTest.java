package io.shardtrain.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.typed.javadsl.AskPattern;
import akka.persistence.jdbc.query.javadsl.JdbcReadJournal;
import akka.persistence.query.PersistenceQuery;
import akka.stream.javadsl.Sink;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.ShardTrain;
import io.shardtrain.actors.config.TrainSettings;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.samples.cluster.ClusterNode;
import io.shardtrain.samples.cluster.JobSubmitter;
import io.shardtrain.samples.cluster.NodeConfig;
import io.shardtrain.samples.cluster.TrainerNode;
import io.shardtrain.samples.testing.FreePorts;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One node (ps, master, trainer) on one H2 database runs job after job and two jobs at once: a
 * trainer that was given no job trains each job as it comes; trainers given a job train that one;
 * no job finds another's blocks; a finished job's blocks passivate; its journal is deleted with one call.
 */
class SeveralJobsTest {
  private static final int STEPS = 40;

  @TempDir static Path dir;
  static ClusterNode.Started node;
  static ShardTrain api;
  static Config base;

  @BeforeAll
  static void startNode() throws Exception {
    TinyDataSet.write(dir);
    int port = FreePorts.one();
    base = NodeConfig.build(List.of("ps", "master", "trainer"), "127.0.0.1", port, List.of(),
        "jdbc:h2:" + dir.resolve("journal"), null, Map.of("shardtrain.data-dir", dir.toString(),
            "shardtrain.transport.bulk.enabled", false));
    node = ClusterNode.start(base);
    ClusterNode.awaitUp(node.system(), Duration.ofSeconds(30));
    api = node.api();
  }

  @AfterAll
  static void stopNode() throws Exception {
    if (node != null) {
      node.system().terminate();
      node.system().getWhenTerminated().toCompletableFuture().get();
    }
  }

  static JobSpec submit(String id, int trainers, long steps) throws Exception {
    Config job = ConfigFactory.parseString("shardtrain.train { job-id = " + id + ", dataset = fashion-mnist,"
        + " hidden = [8], steps = " + steps + ", trainers = " + trainers + ", mode = sync, batch = 16 }")
        .withFallback(base).resolve();
    return JobSubmitter.submit(api, job, Duration.ofSeconds(60));
  }

  static JobProtocol.JobStatus status(String id) throws Exception {
    return api.status(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static long updatesOf(String blockId) throws Exception {
    return ParameterBlock.entityRef(node.system(), blockId).<BlockProtocol.BlockStats>ask(BlockProtocol.GetStats::new,
        Duration.ofSeconds(10)).toCompletableFuture().get(15, TimeUnit.SECONDS).updates();
  }

  static long eventsOf(String persistenceId) throws Exception {
    JdbcReadJournal journal = PersistenceQuery.get(node.system()).getReadJournalFor(JdbcReadJournal.class,
        JdbcReadJournal.Identifier());
    return journal.currentEventsByPersistenceId(persistenceId, 0, Long.MAX_VALUE)
        .runWith(Sink.seq(), node.system()).toCompletableFuture().get(15, TimeUnit.SECONDS).size();
  }

  static Throwable refusal(CompletableFuture<?> call) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(15, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void jobsRunOneAfterAnotherAndTwoAtOnceOnOneDatabaseEachWithItsOwnBlocksAndAFinishedOnesJournalIsDeleted()
      throws Exception {
    TrainSettings settings = TrainSettings.fromConfig(base);
    // A trainer given no job trains each job as it comes, waiting between them.
    CompletableFuture<Long> any = TrainerNode.start(api, "any", settings, System.out);
    JobSpec first = submit("first", 1, STEPS);
    assertEquals(STEPS, any.get(120, TimeUnit.SECONDS));
    assertTrue(status("first").done());
    // The same model and spec under another id: fresh blocks, not the first job's.
    JobSpec second = submit("second", 1, STEPS);
    assertEquals(first.blocks().stream().map(b -> b.replace("first/", "second/")).toList(), second.blocks());
    awaitDone("second", 120);
    // Finished jobs' blocks leave memory; asked again, they recover what they journaled.
    awaitPassivated("first/", "second/");
    for (String b : second.blocks()) assertEquals(STEPS, updatesOf(b), b);
    for (String b : first.blocks()) assertEquals(STEPS, updatesOf(b), b);
    // A finished job's id is not run again: its blocks are in the journal.
    Throwable again = refusal(AskPattern.<JobProtocol.Command, akka.Done>askWithStatus(api.master(),
        r -> new JobProtocol.SubmitJob(first, r), Duration.ofSeconds(10), node.system().scheduler())
        .toCompletableFuture());
    assertTrue(again.getMessage().contains("job 'first' has finished"), again.getMessage());

    // Two jobs at once: "any" takes the oldest running one, the others the job they are given.
    JobSpec left = submit("left", 2, 3 * STEPS);
    JobSpec right = submit("right", 2, 3 * STEPS);
    CompletableFuture<Long> l2 = TrainerNode.start(api, "l2", settings, System.out, "left");
    CompletableFuture<Long> r1 = TrainerNode.start(api, "r1", settings, System.out, "right");
    CompletableFuture<Long> r2 = TrainerNode.start(api, "r2", settings, System.out, "right");
    boolean together = false;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
    while (!(l2.isDone() && r1.isDone() && r2.isDone()) && System.nanoTime() < deadline) {
      JobProtocol.JobStatus l = status("left");
      JobProtocol.JobStatus r = status("right");
      together |= !l.done() && !r.done() && l.examplesReported() > 0 && r.examplesReported() > 0;
      Thread.sleep(50);
    }
    assertEquals(3 * STEPS, l2.get(10, TimeUnit.SECONDS));
    assertEquals(3 * STEPS, r1.get(10, TimeUnit.SECONDS));
    assertEquals(3 * STEPS, r2.get(10, TimeUnit.SECONDS));
    assertTrue(together, "both jobs trained at the same time");
    awaitPassivated("left/", "right/");
    for (String b : left.blocks()) assertEquals(3 * STEPS, updatesOf(b), b);
    for (String b : right.blocks()) assertEquals(3 * STEPS, updatesOf(b), b);
    assertEquals(List.of(new JobProtocol.JobEntry("first", false), new JobProtocol.JobEntry("second", false),
        new JobProtocol.JobEntry("left", false), new JobProtocol.JobEntry("right", false)),
        awaitFinished(4));

    // Deleting: a running job is refused; a finished one loses its master's and blocks' events.
    String block = first.blocks().get(0);
    assertTrue(eventsOf("ParameterBlock|" + block) > 0);
    JobProtocol.JobDeleted deleted = api.deleteJob("first").toCompletableFuture().get(60, TimeUnit.SECONDS);
    assertEquals(1 + first.blocks().size(), deleted.entities());
    for (String b : first.blocks()) assertEquals(0, eventsOf("ParameterBlock|" + b), b);
    assertEquals(0, eventsOf("shardtrain-master|first"));
    assertTrue(eventsOf("ParameterBlock|" + second.blocks().get(0)) > 0, "the other jobs keep theirs");
    assertFalse(api.jobs().toCompletableFuture().get(10, TimeUnit.SECONDS).stream()
        .anyMatch(j -> j.jobId().equals("first")));
    Throwable twice = refusal(api.deleteJob("first").toCompletableFuture());
    assertTrue(twice.getMessage().endsWith("(it was deleted); jobs: second (done), left (done), right (done)"),
        twice.getMessage());
    // Its id stays taken, and a submit under it places no block.
    Exception reused = assertThrows(Exception.class, () -> submit("first", 1, STEPS));
    assertTrue(String.valueOf(reused.getMessage()).contains("job 'first' was deleted: a job id is never used twice,"
        + " not even once its journal is deleted; submit the new job under another id"), String.valueOf(reused));
    for (String b : first.blocks()) assertEquals(0, eventsOf("ParameterBlock|" + b), b);
  }

  /** Waits until this node holds no block whose id starts with one of {@code prefixes}. */
  static void awaitPassivated(String... prefixes) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (ClusterNode.blocksOf(node.system(), node.system().address(), Duration.ofSeconds(5)).stream()
        .anyMatch(b -> java.util.Arrays.stream(prefixes).anyMatch(b::startsWith))) {
      assertTrue(System.nanoTime() < deadline, "blocks of " + List.of(prefixes) + " still in memory after 30 s");
      Thread.sleep(200);
    }
  }

  static void awaitDone(String id, int seconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!status(id).done()) {
      assertTrue(System.nanoTime() < deadline, "job " + id + " not done within " + seconds + " s");
      Thread.sleep(100);
    }
  }

  /** The job list once {@code n} jobs are finished (the masters report done on their next tick). */
  static List<JobProtocol.JobEntry> awaitFinished(int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      List<JobProtocol.JobEntry> jobs = api.jobs().toCompletableFuture().get(10, TimeUnit.SECONDS);
      if (jobs.stream().filter(j -> !j.running()).count() >= n || System.nanoTime() > deadline) return jobs;
      Thread.sleep(100);
    }
  }
}
