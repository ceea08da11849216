package io.shardtrain.actors.master;

import akka.Done;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.MemberStatus;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import akka.pattern.StatusReply;
import akka.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.shardtrain.actors.job.JobProtocol;
import io.shardtrain.actors.job.TrainerNotice;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A trainer on another node registers the message adapter it receives notices on: the master
 * reaches it there, and watching it takes the trainer out of the job when its actor stops.
 */
class MasterRemoteTrainerTest {
  static final Config REMOTE = ConfigFactory.parseString("akka.actor.provider = cluster\n"
      + "akka.remote.artery.canonical.port = 0\n"
      + "akka.remote.artery.canonical.hostname = 127.0.0.1\n");
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  ActorTestKit masterNode;
  ActorTestKit trainerNode;

  @AfterEach
  void stopNodes() {
    if (trainerNode != null) trainerNode.shutdownTestKit();
    if (masterNode != null) masterNode.shutdownTestKit();
  }

  /** A stand-in trainer: registers an adapter for notices, passes on what it hears, stops on "stop". */
  static akka.actor.typed.Behavior<Object> trainer(ActorRef<JobProtocol.Command> master, ActorRef<Object> probe) {
    return Behaviors.setup(ctx -> {
      ActorRef<TrainerNotice> notices = ctx.messageAdapter(TrainerNotice.class, n -> n);
      ctx.askWithStatus(JobProtocol.Registration.class, master, TIMEOUT,
          r -> new JobProtocol.RegisterTrainer("t", notices, r),
          (registration, failure) -> failure == null ? registration : failure);
      return Behaviors.receiveMessage(m -> {
        if ("stop".equals(m)) return Behaviors.stopped();
        probe.tell(m);
        return Behaviors.same();
      });
    });
  }

  @Test
  void aTrainerOnAnotherNodeGetsNoticesAndIsWatchedThroughItsAdapter() throws Exception {
    masterNode = ActorTestKit.create("MasterRemoteTrainerTest",
        REMOTE.withFallback(EventSourcedBehaviorTestKit.config()).withFallback(ConfigFactory.load()));
    trainerNode = ActorTestKit.create("MasterRemoteTrainerTest", REMOTE.withFallback(ConfigFactory.load()));
    // Both nodes join one cluster, as ShardTrain's nodes do: Akka watches remote actors only there.
    akka.actor.Address seed = Cluster.get(masterNode.system()).selfMember().address();
    Cluster.get(masterNode.system()).manager().tell(Join.create(seed));
    Cluster.get(trainerNode.system()).manager().tell(Join.create(seed));
    TestProbe<Object> up = masterNode.createTestProbe();
    up.awaitAssert(TIMEOUT, () -> {
      for (ActorTestKit node : List.of(masterNode, trainerNode)) {
        assertEquals(MemberStatus.up(), Cluster.get(node.system()).selfMember().status());
      }
      return null;
    });
    var blocks = masterNode.spawn(MasterTest.ackingBlocks(masterNode.createTestProbe()));
    ActorRef<JobProtocol.Command> master = masterNode.spawn(Master.create(MasterTest.SETTINGS, blocks));
    AskPattern.<JobProtocol.Command, StatusReply<Done>>ask(master, r -> new JobProtocol.SubmitJob(MasterTest.job(), r),
        TIMEOUT, masterNode.scheduler()).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    ActorRef<JobProtocol.Command> remoteMaster = ActorRefResolver.get(trainerNode.system())
        .resolveActorRef(ActorRefResolver.get(masterNode.system()).toSerializationFormat(master));

    TestProbe<Object> probe = trainerNode.createTestProbe();
    ActorRef<Object> trainer = trainerNode.spawn(trainer(remoteMaster, probe.ref()));
    assertEquals(List.of("t"), ((JobProtocol.Registration) probe.receiveMessage(TIMEOUT)).members());

    // A progress report of an older generation is refused and its trainer told where the job is.
    AskPattern.<JobProtocol.Command, StatusReply<Done>>ask(remoteMaster,
        r -> new JobProtocol.ReportProgress("t", 0, 0, 8, 1, -1, r), TIMEOUT, trainerNode.scheduler());
    assertEquals(new TrainerNotice.RollBack(0, 0), probe.receiveMessage(TIMEOUT));

    trainer.tell("stop");
    TestProbe<JobProtocol.JobStatus> status = masterNode.createTestProbe();
    status.awaitAssert(TIMEOUT, () -> {
      master.tell(new JobProtocol.GetStatus(status.ref()));
      assertEquals(List.of(), status.receiveMessage().members(), "dropped once its actor stopped");
      return null;
    });
  }
}
