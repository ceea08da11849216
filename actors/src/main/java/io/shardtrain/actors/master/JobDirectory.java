package io.shardtrain.actors.master;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.sharding.typed.ShardingEnvelope;
import akka.cluster.typed.ClusterSingleton;
import akka.cluster.typed.ClusterSingletonSettings;
import akka.cluster.typed.SingletonActor;
import akka.pattern.StatusReply;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.RecoveryCompleted;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.Effect;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import akka.persistence.typed.javadsl.SignalHandler;
import io.shardtrain.actors.job.CborSerializable;
import io.shardtrain.actors.job.JobProtocol.*;
import io.shardtrain.actors.job.JobSpec;
import io.shardtrain.actors.ps.BlockProtocol;
import io.shardtrain.actors.ps.ParameterBlock;
import io.shardtrain.actors.sparse.SparseProtocol;
import io.shardtrain.actors.sparse.SparseShard;
import io.shardtrain.persistence.journal.JournalEraser;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster's master: a cluster singleton (role {@code master}) that keeps the list of jobs
 * ({@link JobBook}) and runs one {@link Master} per job as its child, each journaled under its own
 * id. It routes: a submit to the job it names (opening it first), {@link ToJob} to its job, any
 * other command to the newest running job, so a cluster that runs one job at a time is addressed
 * as before. The children move with the singleton when its node leaves, and recover there.
 */
public final class JobDirectory extends EventSourcedBehavior<Command, JobDirectory.Event, JobBook> {
  public static final String SINGLETON_NAME = "shardtrain-master";

  /** A job's master found its job done ({@code cancelled} before its end) and its trainers gone. */
  record JobEnded(JobSpec job, boolean cancelled) implements Internal {}

  /** The status of a job to delete came back (or did not). */
  private record ToErase(String jobId, JobStatus status, Throwable failure, ActorRef<StatusReply<JobDeleted>> replyTo)
      implements Internal {}

  private record Erased(String jobId, int entities, Throwable failure, ActorRef<StatusReply<JobDeleted>> replyTo)
      implements Internal {}

  // ---- events (journaled by class name: they stay nested here) ----
  public sealed interface Event extends CborSerializable {}

  public record JobOpened(String jobId) implements Event {}

  /** {@code cancelled}: before its last step or epoch (absent from events journaled before cancels were). */
  public record JobFinished(String jobId, boolean cancelled) implements Event {}

  public record JobErased(String jobId) implements Event {}

  private final ActorContext<Command> context;
  private final MasterSettings settings;
  private final CheckpointSettings checkpoints;
  private final ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks;

  /**
   * Starts (or finds) the singleton on this node's cluster and returns its proxy; membership
   * updates go to the parameter blocks through this node's shard region.
   */
  public static ActorRef<Command> initSingleton(ActorSystem<?> system) {
    MasterSettings settings = MasterSettings.create(system);
    CheckpointSettings checkpoints = CheckpointSettings.create(system);
    ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks = ParameterBlock.init(system);
    return ClusterSingleton.get(system).init(
        SingletonActor.of(create(settings, checkpoints, blocks), SINGLETON_NAME)
            .withSettings(ClusterSingletonSettings.create(system).withRole("master")));
  }

  public static Behavior<Command> create(MasterSettings settings, CheckpointSettings checkpoints,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    return Behaviors.setup(ctx -> new JobDirectory(ctx, settings, checkpoints, blocks));
  }

  private JobDirectory(ActorContext<Command> context, MasterSettings settings, CheckpointSettings checkpoints,
      ActorRef<ShardingEnvelope<BlockProtocol.Command>> blocks) {
    super(PersistenceId.ofUniqueId("shardtrain-jobs"));
    this.context = context;
    this.settings = settings;
    this.checkpoints = checkpoints;
    this.blocks = blocks;
  }

  @Override
  public JobBook emptyState() {
    return new JobBook();
  }

  @Override
  public SignalHandler<JobBook> signalHandler() {
    // A running job's master runs its own timers (liveness, checkpoints): it starts at once.
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), book -> book.running().forEach(this::master))
        .build();
  }

  @Override
  public CommandHandler<Command, Event, JobBook> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(SubmitJob.class, this::onSubmit)
        .onCommand(ToJob.class, this::onToJob)
        .onCommand(MaySubmit.class, (book, c) -> {
          String refusal = refusal(book, c.jobId());
          c.replyTo().tell(refusal == null ? StatusReply.ack() : StatusReply.error(refusal));
          return Effect().none();
        })
        .onCommand(ListJobs.class, (book, c) -> {
          c.replyTo().tell(new JobList(book.entries()));
          return Effect().none();
        })
        .onCommand(JobEnded.class, this::onJobEnded)
        .onCommand(DeleteJob.class, this::onDelete)
        .onCommand(ToErase.class, this::onToErase)
        .onCommand(Erased.class, this::onErased)
        .onAnyCommand(this::toCurrent);
  }

  private Effect<Event, JobBook> onSubmit(JobBook book, SubmitJob c) {
    String id = c.job().jobId();
    JobBook.Stage stage = book.stage(id);
    if (stage == null) {
      return Effect().persist(new JobOpened(id)).thenRun(b -> {
        context.getLog().info("job {} opened; running: {}", id, b.running());
        master(id).tell(c);
      });
    }
    if (stage == JobBook.Stage.RUNNING) master(id).tell(c);
    else c.replyTo().tell(StatusReply.error(refusal(book, id)));
    return Effect().none();
  }

  /** The book's jobs for a message: "a (running), b (done), c (cancelled)", or "none". */
  private static String listed(JobBook book) {
    List<String> jobs = book.entries().stream().map(j -> j.jobId() + " (" + j.state() + ")").toList();
    return jobs.isEmpty() ? "none" : String.join(", ", jobs);
  }

  /** Why job {@code id} may not be submitted (it finished, or was deleted); null when it may. */
  private static String refusal(JobBook book, String id) {
    JobBook.Stage stage = book.stage(id);
    if (stage == null || stage == JobBook.Stage.RUNNING) return null;
    return "job '" + id + "' " + (stage == JobBook.Stage.FINISHED ? "has finished" : "was deleted")
        + ": a job id is never used twice, not even once its journal is deleted; submit the new job under another id";
  }

  /** A finished job's blocks and table shards leave memory; its master stays to answer for it. */
  private Effect<Event, JobBook> onJobEnded(JobBook book, JobEnded c) {
    String id = c.job().jobId();
    if (book.stage(id) != JobBook.Stage.RUNNING) return Effect().none();
    return Effect().persist(new JobFinished(id, c.cancelled())).thenRun(b -> {
      retire(c.job());
      context.getLog().info("job {} {}; its {} blocks and {} table shards passivate", id,
          c.cancelled() ? "cancelled" : "finished", c.job().blocks().size(), c.job().tableShards().size());
    });
  }

  /** Tells the job's blocks and table shards to leave memory (a status or a late trainer may have woken them). */
  private void retire(JobSpec job) {
    for (String block : job.blocks()) blocks.tell(new ShardingEnvelope<>(block, new BlockProtocol.Retire()));
    for (String shard : job.tableShards()) SparseShard.entityRef(context.getSystem(), shard).tell(new SparseProtocol.Retire());
  }

  private Effect<Event, JobBook> onToJob(JobBook book, ToJob c) {
    JobBook.Stage stage = book.stage(c.jobId());
    if (stage == JobBook.Stage.DELETED && c.command() instanceof GetStatus s) {
      s.replyTo().tell(JobStatus.none(c.jobId()));
    } else if (stage == null || stage == JobBook.Stage.DELETED) {
      refuse(c.command(), "no job '" + c.jobId() + "' in this cluster" + (stage == null ? "" : " (it was deleted)")
          + "; jobs: " + listed(book));
    } else if (c.command() instanceof SubmitJob s && !s.job().jobId().equals(c.jobId())) {
      s.replyTo().tell(StatusReply.error("a submit of job '" + s.job().jobId() + "' was addressed to job '"
          + c.jobId() + "'"));
    } else if (c.command() instanceof SubmitJob s) {
      return onSubmit(book, s);
    } else {
      master(c.jobId()).tell(c.command());
    }
    return Effect().none();
  }

  private Effect<Event, JobBook> toCurrent(JobBook book, Command c) {
    String current = book.current();
    if (current != null) master(current).tell(c);
    else refuse(c, "no job has been submitted yet");
    return Effect().none();
  }

  /** Answers what expects an answer when there is no job to take {@code c}; anything else is dropped. */
  private void refuse(Command c, String why) {
    if (c instanceof GetStatus s) s.replyTo().tell(JobStatus.none(""));
    else if (c instanceof RegisterTrainer r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof RequestTask r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof ReportProgress r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof LeaveJob r) r.replyTo().tell(StatusReply.ack());
    else if (c instanceof TakeCheckpoint r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof RequestAucShare r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof SubmitJob r) r.replyTo().tell(StatusReply.error(why));
    else if (c instanceof CancelJob r) r.replyTo().tell(StatusReply.error(why));
    else context.getLog().debug("{}: dropped {}", why, c);
  }

  // ---- deleting a finished job ----

  private Effect<Event, JobBook> onDelete(JobBook book, DeleteJob c) {
    JobBook.Stage stage = book.stage(c.jobId());
    if (stage != JobBook.Stage.FINISHED) {
      c.replyTo().tell(StatusReply.error(stage == JobBook.Stage.RUNNING
          ? "job '" + c.jobId() + "' is running; a job's journal can be deleted once it finished"
          : "no finished job '" + c.jobId() + "' in this cluster" + (stage == null ? "" : " (it was deleted)")
              + "; jobs: " + listed(book)));
      return Effect().none();
    }
    context.ask(JobStatus.class, master(c.jobId()), settings.askTimeout(), GetStatus::new,
        (status, failure) -> new ToErase(c.jobId(), status, failure, c.replyTo()));
    return Effect().none();
  }

  private Effect<Event, JobBook> onToErase(JobBook book, ToErase c) {
    if (c.failure() != null || c.status().job() == null) {
      c.replyTo().tell(StatusReply.error("job '" + c.jobId() + "': its master did not say which blocks it has"
          + (c.failure() == null ? "" : " (" + c.failure().getMessage() + ")")));
      return Effect().none();
    }
    JobSpec job = c.status().job();
    List<String> ids = new ArrayList<>();
    ids.add(Master.persistenceId(job.jobId()).id());
    for (String b : job.blocks()) ids.add(PersistenceId.of(ParameterBlock.ENTITY_KEY.name(), b).id());
    for (String s : job.tableShards()) ids.add(PersistenceId.of(SparseShard.ENTITY_KEY.name(), s).id());
    context.getChild(childName(c.jobId())).ifPresent(context::stop);
    retire(job);
    context.pipeToSelf(JournalEraser.erase(context.getSystem(), ids, settings.askTimeout().multipliedBy(4)),
        (n, failure) -> new Erased(c.jobId(), n == null ? 0 : n, failure, c.replyTo()));
    return Effect().none();
  }

  private Effect<Event, JobBook> onErased(JobBook book, Erased c) {
    if (c.failure() != null) {
      c.replyTo().tell(StatusReply.error("job '" + c.jobId() + "': " + c.failure().getMessage()));
      return Effect().none();
    }
    return Effect().persist(new JobErased(c.jobId())).thenRun(b -> {
      context.getLog().info("job {}: journal of {} entities deleted", c.jobId(), c.entities());
      c.replyTo().tell(StatusReply.success(new JobDeleted(c.jobId(), c.entities())));
    });
  }

  /** The master of {@code jobId}, started (and so recovered) when it is not running. */
  private ActorRef<Command> master(String jobId) {
    String name = childName(jobId);
    return context.getChild(name).map(ref -> ref.<Command>unsafeUpcast())
        .orElseGet(() -> context.spawn(Master.create(jobId, settings, checkpoints, blocks, context.getSelf()), name));
  }

  private static String childName(String jobId) {
    return "job-" + URLEncoder.encode(jobId, StandardCharsets.UTF_8);
  }

  @Override
  public EventHandler<JobBook, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(JobOpened.class, (b, e) -> b.opened(e.jobId()))
        .onEvent(JobFinished.class, (b, e) -> b.finished(e.jobId(), e.cancelled()))
        .onEvent(JobErased.class, (b, e) -> b.deleted(e.jobId()))
        .build();
  }
}
