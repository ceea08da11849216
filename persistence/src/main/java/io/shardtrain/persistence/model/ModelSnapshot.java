package io.shardtrain.persistence.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A whole model at one version: a free-form description (model kind, widths, activation...), the
 * version (optimizer step) all values belong to, and the full parameters in model order.
 *
 * <p>Only full parameters are stored, never parameter-server blocks, so a snapshot can initialise
 * a job with any block size or number of {@code ps} nodes. The description keeps its insertion
 * order; parameter and table names are unique together. Sparse tables ({@link TableValues}) hold
 * the rows an embedding's training stored, by id.
 */
public record ModelSnapshot(Map<String, String> description, long version,
    List<ParameterValues> parameters, List<TableValues> tables) {

  /** A model of dense parameters only. */
  public ModelSnapshot(Map<String, String> description, long version, List<ParameterValues> parameters) {
    this(description, version, parameters, List.of());
  }

  public ModelSnapshot {
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(parameters, "parameters");
    Objects.requireNonNull(tables, "tables");
    Map<String, String> d = new LinkedHashMap<>();
    description.forEach((k, v) -> {
      if (k == null || v == null) {
        throw new IllegalArgumentException("model description has a null key or value: "
            + k + "=" + v);
      }
      d.put(k, v);
    });
    description = Collections.unmodifiableMap(d);
    Set<String> seen = new HashSet<>();
    for (ParameterValues p : parameters) {
      Objects.requireNonNull(p, "parameter");
      if (!seen.add(p.name())) {
        throw new IllegalArgumentException("model snapshot has parameter " + p.name() + " twice");
      }
    }
    parameters = List.copyOf(new ArrayList<>(parameters));
    for (TableValues t : tables) {
      Objects.requireNonNull(t, "table");
      if (!seen.add(t.name())) {
        throw new IllegalArgumentException("model snapshot has the name " + t.name() + " twice");
      }
    }
    tables = List.copyOf(tables);
  }

  /** The table called {@code name}, or an IllegalArgumentException listing the tables held. */
  public TableValues table(String name) {
    for (TableValues t : tables) {
      if (t.name().equals(name)) return t;
    }
    throw new IllegalArgumentException("model snapshot has no table " + name + "; it has "
        + (tables.isEmpty() ? "none" : tables.stream().map(TableValues::name).toList()));
  }

  /** The parameter called {@code name}, or an IllegalArgumentException listing the names held. */
  public ParameterValues parameter(String name) {
    for (ParameterValues p : parameters) {
      if (p.name().equals(name)) return p;
    }
    throw new IllegalArgumentException("model snapshot has no parameter " + name + "; it has "
        + names());
  }

  /** Parameter names in order. */
  public List<String> names() {
    List<String> out = new ArrayList<>(parameters.size());
    for (ParameterValues p : parameters) out.add(p.name());
    return out;
  }

  /** Total number of scalar values. */
  public long parameterCount() {
    long n = 0;
    for (ParameterValues p : parameters) n += p.size();
    return n;
  }
}
