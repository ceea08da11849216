package io.shardtrain.samples.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.shardtrain.actors.trainer.StepProfile;
import io.shardtrain.actors.transport.WireTimings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProfileReportTest {
  private static final long MS = 1_000_000;

  private static ProfileReport report() {
    Map<String, StepProfile> trainers = new LinkedHashMap<>();
    trainers.put("trainer-1", new StepProfile(10, 100 * MS, 40 * MS, 10 * MS, 30 * MS, 15 * MS, 10 * MS));
    trainers.put("trainer-2", new StepProfile(10, 100 * MS, 20 * MS, 10 * MS, 60 * MS, 5 * MS, 15 * MS));
    Map<WireTimings.Kind, WireTimings.Figure> wire = Map.of(
        WireTimings.Kind.SERIALIZE, new WireTimings.Figure(3 * MS, 60),
        WireTimings.Kind.DESERIALIZE, new WireTimings.Figure(2 * MS, 60),
        WireTimings.Kind.COPY_OUT, new WireTimings.Figure(MS, 20),
        WireTimings.Kind.COPY_IN, new WireTimings.Figure(MS, 20));
    return new ProfileReport(trainers, wire);
  }

  @Test
  void printsOneLinePerTrainerOneForAllAndOneForSerializationWithMeansPerStepAndShares() {
    List<String> lines = report().lines();
    assertEquals(List.of(
        "profile trainer-1: 10 steps, 10.000 ms per step = compute 4.000 (40.0%, 1.000 on CPU) + push wait 1.000"
            + " (10.0%) + pull wait 3.000 (30.0%) + master wait 1.500 (15.0%) + other 0.500 (5.0%)",
        "profile trainer-2: 10 steps, 10.000 ms per step = compute 2.000 (20.0%, 1.500 on CPU) + push wait 1.000"
            + " (10.0%) + pull wait 6.000 (60.0%) + master wait 0.500 (5.0%) + other 0.500 (5.0%)",
        "profile all trainers: 20 steps, 10.000 ms per step = compute 3.000 (30.0%, 1.250 on CPU) + push wait"
            + " 1.000 (10.0%) + pull wait 4.500 (45.0%) + master wait 1.000 (10.0%) + other 0.500 (5.0%)",
        "profile serialization (process-wide, all nodes): serialize 3.0 ms in 60 calls, deserialize 2.0 ms in 60"
            + " calls, copy out 1.0 ms in 20 calls, copy in 1.0 ms in 20 calls, 0.350 ms per trainer step"),
        lines);
  }

  @Test
  @SuppressWarnings("unchecked")
  void theReportsProfileHasEachTrainersPartsInNanosecondsTheTotalAndTheSerialization() {
    Map<String, Object> json = report().json();
    List<Object> trainers = (List<Object>) json.get("trainers");
    assertEquals(2, trainers.size());
    Map<String, Object> second = (Map<String, Object>) trainers.get(1);
    assertEquals("trainer-2", second.get("trainer"));
    assertEquals(60 * MS, second.get("pull_wait_ns"));
    assertEquals(5 * MS, second.get("other_ns"));
    assertEquals(15 * MS, second.get("compute_cpu_ns"));
    Map<String, Object> total = (Map<String, Object>) json.get("total");
    assertEquals(20L, total.get("steps"));
    assertEquals(200 * MS, total.get("wall_ns"));
    assertEquals(4.5, ((Map<String, Object>) total.get("ms_per_step")).get("pull_wait"));
    assertEquals(0.3, ((Map<String, Object>) total.get("share_of_wall")).get("compute"));
    Map<String, Object> wire = (Map<String, Object>) json.get("serialization");
    assertEquals(60L, wire.get("serialize_calls"));
    assertEquals(2 * MS, wire.get("deserialize_ns"));
    assertEquals(0.35, (double) wire.get("ms_per_trainer_step"), 1e-12);
  }
}
