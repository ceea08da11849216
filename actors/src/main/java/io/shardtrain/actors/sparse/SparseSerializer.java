package io.shardtrain.actors.sparse;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.SerializerWithStringManifest;
import io.shardtrain.actors.sparse.SparseEvents.GradientApplied;
import io.shardtrain.actors.sparse.SparseEvents.MembershipUpdated;
import io.shardtrain.actors.sparse.SparseEvents.RowsExpired;
import io.shardtrain.actors.sparse.SparseEvents.RowsSaved;
import io.shardtrain.actors.sparse.SparseEvents.ShardHeader;
import io.shardtrain.actors.sparse.SparseEvents.ShardInitialized;
import io.shardtrain.actors.sparse.SparseEvents.SketchSaved;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotBegun;
import io.shardtrain.actors.sparse.SparseEvents.SnapshotCompleted;
import io.shardtrain.actors.sparse.SparseEvents.StepCommitted;
import io.shardtrain.actors.sparse.SparseProtocol.Accepted;
import io.shardtrain.actors.sparse.SparseProtocol.Applied;
import io.shardtrain.actors.sparse.SparseProtocol.Duplicate;
import io.shardtrain.actors.sparse.SparseProtocol.GetStats;
import io.shardtrain.actors.sparse.SparseProtocol.InitShard;
import io.shardtrain.actors.sparse.SparseProtocol.MembershipInForce;
import io.shardtrain.actors.sparse.SparseProtocol.Problem;
import io.shardtrain.actors.sparse.SparseProtocol.PullRows;
import io.shardtrain.actors.sparse.SparseProtocol.PushRows;
import io.shardtrain.actors.sparse.SparseProtocol.Refused;
import io.shardtrain.actors.sparse.SparseProtocol.Rows;
import io.shardtrain.actors.sparse.SparseProtocol.ShardReady;
import io.shardtrain.actors.sparse.SparseProtocol.ShardStats;
import io.shardtrain.actors.sparse.SparseProtocol.Stale;
import io.shardtrain.actors.sparse.SparseProtocol.UpdateMembership;
import io.shardtrain.actors.transport.ExactBytes;
import io.shardtrain.actors.transport.WireTimings;
import io.shardtrain.compute.sparse.RowInit;
import io.shardtrain.compute.sparse.RowOptimizer;
import java.io.NotSerializableException;
import java.nio.BufferUnderflowException;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Binary serializer of the sparse shards' messages ({@link SparseProtocol}), events
 * ({@link SparseEvents}) and snapshot header. Journals keep its identifier and each manifest with
 * the bytes, so neither ever changes; every payload starts with a format byte, and a later format
 * must still read every earlier one that a journal may hold (format 1 is the only one yet). One
 * entry per type below. The messages' time (not the events' or the snapshot header's) counts in
 * {@link WireTimings} while that is on, as the parameter blocks' wire serializer's does.
 */
public final class SparseSerializer extends SerializerWithStringManifest {
  /** Stored with every event and snapshot, so it never changes. */
  public static final int IDENTIFIER = 717_010;
  private static final int FORMAT = 1;

  private record Entry<T>(String manifest, Class<T> type, BiConsumer<Bytes.Out, T> writer, Function<Bytes.In, T> reader,
      boolean wire) {}

  private final ExtendedActorSystem system;
  private final Map<Class<?>, Entry<?>> byClass = new HashMap<>();
  private final Map<String, Entry<?>> byManifest = new HashMap<>();
  private volatile ActorRefResolver resolver;

  public SparseSerializer(ExtendedActorSystem system) {
    this.system = system;
    // Commands
    entry("InitShard", InitShard.class, (o, m) -> {
      spec(o, m.spec());
      o.i(m.shard());
      ref(o, m.replyTo());
    }, in -> new InitShard(spec(in), in.i(), ref(in)));
    entry("PullRows", PullRows.class, (o, m) -> o.longs(m.ids()).l(m.minVersion()).s(ref(m.replyTo())),
        in -> new PullRows(in.longs(), in.l(), ref(in)));
    entry("PushRows", PushRows.class, (o, m) -> {
      o.s(m.trainerId()).l(m.step()).l(m.baseVersion()).f(m.weight()).longs(m.ids()).floats(m.grads());
      ref(o, m.replyTo());
    }, in -> new PushRows(in.s(), in.l(), in.l(), in.f(), in.longs(), in.floats(), ref(in)));
    entry("UpdateMembership", UpdateMembership.class, (o, m) -> {
      o.l(m.epoch()).strings(m.trainers());
      ref(o, m.replyTo());
    }, in -> new UpdateMembership(in.l(), in.strings(), ref(in)));
    entry("GetStats", GetStats.class, (o, m) -> ref(o, m.replyTo()), in -> new GetStats(ref(in)));
    entry("ExportRows", SparseProtocol.ExportRows.class, (o, m) -> {
      o.l(m.afterId()).i(m.limit());
      ref(o, m.replyTo());
    }, in -> new SparseProtocol.ExportRows(in.l(), in.i(), ref(in)));
    entry("LoadRows", SparseProtocol.LoadRows.class, (o, m) -> {
      o.longs(m.ids()).floats(m.values());
      ref(o, m.replyTo());
    }, in -> new SparseProtocol.LoadRows(in.longs(), in.floats(), ref(in)));
    entry("Retire", SparseProtocol.Retire.class, (o, m) -> { }, in -> new SparseProtocol.Retire());
    // Replies
    entry("ShardReady", ShardReady.class, (o, m) -> o.l(m.version()), in -> new ShardReady(in.l()));
    entry("RowsPage", SparseProtocol.RowsPage.class,
        (o, m) -> o.i(m.shard()).l(m.version()).longs(m.ids()).floats(m.values()).b(m.more() ? 1 : 0),
        in -> new SparseProtocol.RowsPage(in.i(), in.l(), in.longs(), in.floats(), in.bool()));
    entry("RowsStored", SparseProtocol.RowsStored.class, (o, m) -> o.l(m.rows()),
        in -> new SparseProtocol.RowsStored(in.l()));
    entry("Rows", Rows.class, (o, m) -> o.s(m.table()).i(m.shard()).l(m.version()).longs(m.ids()).floats(m.values()),
        in -> new Rows(in.s(), in.i(), in.l(), in.longs(), in.floats()));
    entry("Applied", Applied.class, (o, m) -> o.l(m.version()), in -> new Applied(in.l()));
    entry("Accepted", Accepted.class, (o, m) -> o.l(m.version()), in -> new Accepted(in.l()));
    entry("Duplicate", Duplicate.class, (o, m) -> o.l(m.version()), in -> new Duplicate(in.l()));
    entry("Stale", Stale.class, (o, m) -> o.l(m.version()), in -> new Stale(in.l()));
    entry("MembershipInForce", MembershipInForce.class, (o, m) -> o.l(m.epoch()), in -> new MembershipInForce(in.l()));
    entry("Refused", Refused.class, (o, m) -> o.s(m.problem().name()).s(m.message()),
        in -> new Refused(Problem.valueOf(in.s()), in.s()));
    entry("ShardStats", ShardStats.class, (o, m) -> {
      o.s(m.entityId()).b(m.initialised() ? 1 : 0).l(m.version()).l(m.rows()).l(m.bytesAllocated()).l(m.rowsCreated())
          .l(m.rowsNotAdmitted()).l(m.rowsExpired()).l(m.pushes()).l(m.duplicates()).l(m.refused()).l(m.pendingStep())
          .strings(m.waitingFor()).l(m.membershipEpoch()).l(m.snapshots()).l(m.eventsReplayed());
    }, in -> new ShardStats(in.s(), in.bool(), in.l(), in.l(), in.l(), in.l(), in.l(), in.l(), in.l(), in.l(), in.l(),
        in.l(), in.strings(), in.l(), in.l(), in.l()));
    // Events and the snapshot header
    entry("ShardInitialized", ShardInitialized.class, (o, m) -> {
      spec(o, m.spec());
      o.i(m.shard());
    }, in -> new ShardInitialized(spec(in), in.i()));
    entry("StepCommitted", StepCommitted.class,
        (o, m) -> o.l(m.step()).i(m.part()).i(m.parts()).longs(m.ids()).floats(m.mean()).ints(m.sightings())
            .l(m.examples()).strings(m.contributors()),
        in -> new StepCommitted(in.l(), in.i(), in.i(), in.longs(), in.floats(), in.ints(), in.l(), in.strings()));
    entry("GradientApplied", GradientApplied.class,
        (o, m) -> o.s(m.trainerId()).l(m.step()).i(m.part()).i(m.parts()).f(m.weight()).longs(m.ids()).floats(m.grads()),
        in -> new GradientApplied(in.s(), in.l(), in.i(), in.i(), in.f(), in.longs(), in.floats()));
    entry("MembershipUpdated", MembershipUpdated.class, (o, m) -> o.l(m.epoch()).strings(m.trainers()),
        in -> new MembershipUpdated(in.l(), in.strings()));
    entry("RowsExpired", RowsExpired.class, (o, m) -> o.l(m.version()).longs(m.ids()),
        in -> new RowsExpired(in.l(), in.longs()));
    entry("SnapshotBegun", SnapshotBegun.class, (o, m) -> o.l(m.generation()).l(m.sequenceNr()),
        in -> new SnapshotBegun(in.l(), in.l()));
    entry("RowsLoaded", SparseEvents.RowsLoaded.class, (o, m) -> o.longs(m.ids()).floats(m.values()),
        in -> new SparseEvents.RowsLoaded(in.longs(), in.floats()));
    entry("RowsSaved", RowsSaved.class, (o, m) -> o.l(m.generation()).longs(m.ids()).floats(m.data()).longs(m.touched()),
        in -> new RowsSaved(in.l(), in.longs(), in.floats(), in.longs()));
    entry("SketchSaved", SketchSaved.class, (o, m) -> o.l(m.generation()).i(m.offset()).ints(m.counters()),
        in -> new SketchSaved(in.l(), in.i(), in.ints()));
    entry("SnapshotCompleted", SnapshotCompleted.class, (o, m) -> o.l(m.generation()).l(m.rows()),
        in -> new SnapshotCompleted(in.l(), in.l()));
    entry("ShardHeader", ShardHeader.class, (o, m) -> {
      o.b(m.spec() == null ? 0 : 1);
      if (m.spec() != null) spec(o, m.spec());
      o.i(m.shard()).l(m.version()).l(m.epoch()).strings(m.members()).i(m.lastSteps().size());
      m.lastSteps().forEach((t, s) -> o.s(t).l(s));
      o.l(m.examplesApplied()).l(m.rowsCreated()).l(m.rowsNotAdmitted()).l(m.rowsExpired()).l(m.generation())
          .l(m.sequenceNr());
    }, in -> {
      TableSpec spec = in.bool() ? spec(in) : null;
      int shard = in.i();
      long version = in.l();
      long epoch = in.l();
      java.util.List<String> members = in.strings();
      int n = in.i();
      if (n < 0 || n > in.remaining() / 12) throw new IllegalArgumentException("last-step count " + n);
      Map<String, Long> lastSteps = new TreeMap<>();
      for (int k = 0; k < n; k++) lastSteps.put(in.s(), in.l());
      return new ShardHeader(spec, shard, version, epoch, members, lastSteps, in.l(), in.l(), in.l(), in.l(), in.l(),
          in.l());
    });
  }

  private <T> void entry(String manifest, Class<T> type, BiConsumer<Bytes.Out, T> writer, Function<Bytes.In, T> reader) {
    boolean stored = SparseEvents.Event.class.isAssignableFrom(type) || type == ShardHeader.class;
    Entry<T> e = new Entry<>(manifest, type, writer, reader, !stored);
    if (byClass.put(type, e) != null || byManifest.put(manifest, e) != null) {
      throw new IllegalStateException("SparseSerializer registers " + type + " or '" + manifest + "' twice");
    }
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    return entryFor(o).manifest();
  }

  private Entry<?> entryFor(Object o) {
    Entry<?> e = byClass.get(o.getClass());
    if (e == null) throw new IllegalArgumentException("SparseSerializer cannot serialize " + o.getClass().getName());
    return e;
  }

  @Override
  @SuppressWarnings("unchecked")
  public byte[] toBinary(Object o) {
    Entry<Object> e = (Entry<Object>) entryFor(o);
    boolean timed = e.wire() && WireTimings.on();
    long t0 = timed ? System.nanoTime() : 0;
    // Counted, then written into an array of the exact size: a snapshot chunk is megabytes.
    byte[] bytes = ExactBytes.write(Bytes.Out::counting, Bytes.Out::new, out -> {
      out.b(FORMAT);
      e.writer().accept(out, o);
    }, "SparseSerializer", o.getClass().getSimpleName());
    if (timed) {
      WireTimings.add(WireTimings.Kind.SERIALIZE, System.nanoTime() - t0);
      WireTimings.addBytesSent(bytes.length);
    }
    return bytes;
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    Entry<?> e = byManifest.get(manifest);
    if (e == null) throw new NotSerializableException("unknown manifest '" + manifest + "' for SparseSerializer");
    if (!e.wire() || !WireTimings.on()) return read(e, bytes, manifest);
    long t0 = System.nanoTime();
    Object message = read(e, bytes, manifest);
    WireTimings.add(WireTimings.Kind.DESERIALIZE, System.nanoTime() - t0);
    return message;
  }

  private static Object read(Entry<?> e, byte[] bytes, String manifest) throws NotSerializableException {
    try {
      Bytes.In in = new Bytes.In(bytes);
      int format = in.b();
      if (format != FORMAT) throw new IllegalArgumentException("unknown format " + format + " (this code reads " + FORMAT + ")");
      Object result = e.reader().apply(in);
      if (in.remaining() > 0) throw new IllegalArgumentException(in.remaining() + " trailing bytes");
      return result;
    } catch (BufferUnderflowException | IllegalArgumentException ex) {
      NotSerializableException n = new NotSerializableException("cannot read a '" + manifest + "' of " + bytes.length
          + " bytes: " + (ex instanceof BufferUnderflowException ? "truncated" : ex.getMessage()));
      n.initCause(ex);
      throw n;
    }
  }

  private static void spec(Bytes.Out o, TableSpec s) {
    o.s(s.name()).i(s.shards()).l(s.rows()).i(s.dim());
    o.s(s.init().kind().name()).f(s.init().scale()).l(s.init().seed());
    RowOptimizer r = s.optimizer();
    o.s(r.kind().name()).f(r.lr()).f(r.eps()).f(r.initialAccumulator()).f(r.l1()).f(r.l2()).f(r.beta());
    o.s(s.mode().name()).l(s.maxStaleness()).i(s.admitAfter()).i(s.sketchDepth()).i(s.sketchWidth()).l(s.expireAfter());
  }

  private static TableSpec spec(Bytes.In in) {
    String name = in.s();
    int shards = in.i();
    long rows = in.l();
    int dim = in.i();
    RowInit init = new RowInit(RowInit.Kind.valueOf(in.s()), in.f(), in.l());
    RowOptimizer opt = new RowOptimizer(RowOptimizer.Kind.valueOf(in.s()), in.f(), in.f(), in.f(), in.f(), in.f(), in.f());
    return new TableSpec(name, shards, rows, dim, init, opt, TableSpec.Mode.valueOf(in.s()), in.l(), in.i(), in.i(),
        in.i(), in.l());
  }

  private void ref(Bytes.Out o, ActorRef<?> ref) {
    o.s(ref(ref));
  }

  private String ref(ActorRef<?> ref) {
    return resolver().toSerializationFormat(ref);
  }

  private <T> ActorRef<T> ref(Bytes.In in) {
    return resolver().resolveActorRef(in.s());
  }

  private ActorRefResolver resolver() {
    // Resolved lazily: serializers are created while the system is still starting.
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }
}
