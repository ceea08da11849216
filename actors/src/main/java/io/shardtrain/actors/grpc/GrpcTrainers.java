package io.shardtrain.actors.grpc;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import io.shardtrain.actors.job.TrainerNotice;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The trainers registered through this node's gRPC API. The master talks to a trainer through the
 * actor it registered with and watches it; a gRPC trainer has none, so this node keeps one per
 * trainer that only queues the master's notices until the trainer's next heartbeat collects them,
 * and remembers that the job was cancelled, which heartbeats and progress reports answer from then
 * on. Leaving stops it, which the master's watch also sees.
 */
final class GrpcTrainers {
  private record Registered(ActorRef<TrainerNotice> ref, Queue<TrainerNotice> notices, AtomicBoolean cancelled) {}

  private final ActorSystem<?> system;
  private final Map<String, Registered> trainers = new ConcurrentHashMap<>();
  private final AtomicLong spawned = new AtomicLong();

  GrpcTrainers(ActorSystem<?> system) {
    this.system = system;
  }

  /** The actor that stands for {@code trainerId}: the same one for every registration of that id. */
  ActorRef<TrainerNotice> refFor(String trainerId) {
    return trainers.computeIfAbsent(trainerId, id -> {
      Queue<TrainerNotice> notices = new ConcurrentLinkedQueue<>();
      AtomicBoolean cancelled = new AtomicBoolean();
      String name = "grpc-trainer-" + URLEncoder.encode(id, StandardCharsets.UTF_8) + "-" + spawned.incrementAndGet();
      return new Registered(system.systemActorOf(queueing(notices, cancelled), name, akka.actor.typed.Props.empty()),
          notices, cancelled);
    }).ref();
  }

  /** The notices the master sent {@code trainerId} since the last call, oldest first. */
  List<TrainerNotice> drain(String trainerId) {
    Registered r = trainers.get(trainerId);
    List<TrainerNotice> out = new ArrayList<>();
    if (r == null) return out;
    for (TrainerNotice n; (n = r.notices().poll()) != null; ) out.add(n);
    return out;
  }

  /** Whether the master said that {@code trainerId}'s job was cancelled. */
  boolean cancelled(String trainerId) {
    Registered r = trainers.get(trainerId);
    return r != null && r.cancelled().get();
  }

  void stop(String trainerId) {
    Registered r = trainers.remove(trainerId);
    if (r != null) system.classicSystem().stop(Adapter.toClassic(r.ref()));
  }

  private static Behavior<TrainerNotice> queueing(Queue<TrainerNotice> notices, AtomicBoolean cancelled) {
    return Behaviors.receiveMessage(n -> {
      if (n instanceof TrainerNotice.Cancelled) cancelled.set(true);
      else notices.add(n);
      return Behaviors.same();
    });
  }

  /** Longest trainer id: ids name actors and travel in every membership update and journal event. */
  static final int MAX_TRAINER_ID = 256;

  /** {@code id}, a trainer id the API takes: not blank, at most {@link #MAX_TRAINER_ID} characters. */
  static String checkedId(String id) {
    if (id == null || id.isBlank()) throw ApiError.fail(new ApiError.BadRequest("trainer_id must not be blank"));
    if (id.length() > MAX_TRAINER_ID) {
      throw ApiError.fail(new ApiError.BadRequest("trainer_id of " + id.length() + " characters, more than "
          + MAX_TRAINER_ID));
    }
    return id;
  }
}
