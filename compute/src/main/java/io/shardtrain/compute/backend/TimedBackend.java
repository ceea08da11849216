package io.shardtrain.compute.backend;

import io.shardtrain.compute.RowSlices;
import io.shardtrain.compute.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link CpuBackend} wrapped so that each call is passed on and added up, per operation and
 * shape: how often it ran and the wall time it took, what a single process's step profile splits
 * the step into. The key is the operation
 * and its shape: {@code gemm MxKxN} of op(A) op(B), with {@code :tn}, {@code :nt} or {@code :tt}
 * when an operand is transposed (as {@code bench gemm} writes shapes), {@code gemm+bias+relu}
 * and {@code gemm+reluBackward} the same for the products the rectifier ends, and for the other
 * operations the shape of the tensor they run over, e.g. {@code relu 64x512} or
 * {@code columnSums 64x512}.
 *
 * <p>CPU only: a device backend returns before its kernels finish, so a clock around each call
 * would time launches, and the wrapper would hide its resident step ({@code ResidentMlpBackend}),
 * so that every operation would move its operands instead.
 *
 * <p>Each call costs two clock reads and a lookup in a small table keyed by the operation and its
 * dimensions; the key's text is built once, when a shape first runs. A GEMM on a backend with more
 * than one thread also reads its crew's totals before and after, to split its parallel runs
 * ({@link Slices}). Calls made while {@link #recording} is off are passed on and not counted, and
 * crew steps run then untimed. Not thread-safe, like the models that call it.
 *
 * <p>A step that all the inner backend's threads run together ({@link #crewStep}) calls no
 * operation through here: it is timed by its threads' phases instead ({@link #crewPhases}), so that
 * a profile shows the step that runs without a profile.
 */
public final class TimedBackend implements Backend {

  /**
   * {@code calls} of operation {@code op} took {@code nanos} of wall time; {@code flops}: their
   * floating-point operations, counted for GEMM only ({@code 2 M N K} a call), else 0;
   * {@code slices}: for a GEMM on more than one thread, how its parallel runs split, else null.
   */
  public record OpTime(String op, long calls, long nanos, long flops, Slices slices) {
    public OpTime(String op, long calls, long nanos, long flops) {
      this(op, calls, nanos, flops, null);
    }
  }

  /**
   * A GEMM's {@code runs} parallel runs (a product cut by depth has two per call: the partial
   * products, then their sums): the caller's slices took {@code callerNanos}, from handing out the
   * workers' to the end of its own; the workers' slices {@code workerNanos}, summed;
   * {@code handoffNanos} passed from hand-out to each worker's start, summed; and the caller waited
   * {@code waitNanos} after its own slice for the workers still running.
   */
  public record Slices(long runs, long callerNanos, long workerNanos, long handoffNanos, long waitNanos) {}

  private enum Op {
    GEMM("gemm"), GEMM_BIAS_RELU("gemm+bias+relu"), GEMM_RELU_BACKWARD("gemm+reluBackward"), AXPY("axpy"),
    SCALE("scale"), ADD("add"), MUL("mul"), ADD_ROW_VECTOR("addRowVector"),
    COLUMN_SUMS("columnSums"), ROW_SUMS("rowSums"), ROW_MAX("rowMax"), ROW_ARGMAX("rowArgmax"), RELU("relu"),
    RELU_BACKWARD("reluBackward"), TANH("tanh"), TANH_BACKWARD("tanhBackward"), SIGMOID("sigmoid"),
    SIGMOID_BACKWARD("sigmoidBackward"), SOFTMAX_CROSS_ENTROPY("softmaxCrossEntropy"),
    LOGISTIC_LOSS("logisticLoss"), GATHER("gather"), SCATTER_ADD("scatterAdd");

    private static final Op[] ALL = values();
    /** The method's name. */
    final String label;

    Op(String label) {
      this.label = label;
    }
  }

  /** One key's totals; {@code code} is the operation's ordinal times 4 plus GEMM's transposes. */
  private static final class Entry {
    final int code, a, b, c;
    final String key;
    long calls, nanos, flops;
    /** {@link GemmCrew#totals()} added up over this key's calls; null until a call ran in parallel. */
    long[] slices;

    Entry(int code, int a, int b, int c) {
      this.code = code;
      this.a = a;
      this.b = b;
      this.c = c;
      this.key = key(code, a, b, c);
    }
  }

  private final CpuBackend inner;
  private Entry[] table = new Entry[64];
  private final List<Entry> order = new ArrayList<>();
  private boolean recording = true;
  private final List<CrewStep> crews = new ArrayList<>();

  private TimedBackend(CpuBackend inner) {
    this.inner = inner;
  }

  /** {@code inner} timed; refused for any backend but {@link CpuBackend} (see the class comment). */
  public static TimedBackend wrap(Backend inner) {
    if (!canTime(inner)) {
      throw new IllegalArgumentException("per-operation timing is for the cpu backend only, not '" + inner.name()
          + "': a device runs its operations asynchronously, so a clock around each call would time its launches");
    }
    return new TimedBackend((CpuBackend) inner);
  }

  /** Whether {@link #wrap} takes {@code backend}. */
  public static boolean canTime(Backend backend) {
    return backend instanceof CpuBackend;
  }

  /** Count the calls from now on ({@code true}, the start) or pass them on uncounted. */
  public void recording(boolean on) {
    recording = on;
    for (CrewStep crew : crews) crew.timePhases(on);
  }

  /** Every key counted so far, in the order each first ran; a copy that later calls leave alone. */
  public List<OpTime> snapshot() {
    List<OpTime> out = new ArrayList<>(order.size());
    for (Entry e : order) {
      long[] s = e.slices;
      out.add(new OpTime(e.key, e.calls, e.nanos, e.flops, s == null ? null : new Slices(s[0], s[1], s[2], s[3], s[4])));
    }
    return List.copyOf(out);
  }

  /**
   * The inner backend's {@link CpuBackend#crewStep}, its phases timed ({@link CrewStep#timePhases})
   * while {@link #recording}; null where it has none.
   */
  public CrewStep crewStep(int... widths) {
    CrewStep crew = inner.crewStep(widths);
    if (crew != null) {
      crew.timePhases(recording);
      crews.add(crew);
    }
    return crew;
  }

  /** The phase times of every crew step made here, added up; null when none ran a step. */
  public CrewStep.PhaseTimes crewPhases() {
    long steps = 0, stepNanos = 0;
    long[][] nanos = null;
    long[] stalls = null, stallNanos = null;
    for (CrewStep crew : crews) {
      CrewStep.PhaseTimes p = crew.phaseTimes();
      if (p == null || p.steps() == 0) continue;
      steps += p.steps();
      stepNanos += p.stepNanos();
      int threads = p.nanos().length;
      if (nanos == null) {
        nanos = new long[threads][p.nanos()[0].length];
        stalls = new long[threads];
        stallNanos = new long[threads];
      }
      for (int t = 0; t < threads; t++) {
        for (int i = 0; i < nanos[t].length; i++) nanos[t][i] += p.nanos()[t][i];
        stalls[t] += p.stalls()[t];
        stallNanos[t] += p.stallNanos()[t];
      }
    }
    return nanos == null ? null : new CrewStep.PhaseTimes(steps, stepNanos, nanos, stalls, stallNanos);
  }

  /** The key's entry, counted; null while not recording. */
  private Entry count(Op op, int variant, int a, int b, int c, long flops, long t0) {
    long nanos = System.nanoTime() - t0;
    if (!recording) return null;
    int code = op.ordinal() * 4 + variant;
    Entry e = find(code, a, b, c);
    e.calls++;
    e.nanos += nanos;
    e.flops += flops;
    return e;
  }

  private void count(Op op, Tensor t, long t0) {
    count(op, 0, rows(t), t.cols(), 0, 0, t0);
  }

  /** Rows of a matrix (anything above rank 2 counted as rows of its last dimension); -1 for a vector. */
  private static int rows(Tensor t) {
    return t.rank() == 1 ? -1 : t.size() / Math.max(1, t.cols());
  }

  private Entry find(int code, int a, int b, int c) {
    int mask = table.length - 1;
    int i = hash(code, a, b, c) & mask;
    for (Entry e = table[i]; e != null; i = (i + 1) & mask, e = table[i]) {
      if (e.code == code && e.a == a && e.b == b && e.c == c) return e;
    }
    Entry e = new Entry(code, a, b, c);
    order.add(e);
    // At most half full, so a probe ends soon.
    if (2 * order.size() > table.length) {
      table = new Entry[table.length * 2];
      for (Entry old : order) place(old);
    } else {
      table[i] = e;
    }
    return e;
  }

  private void place(Entry e) {
    int mask = table.length - 1;
    int i = hash(e.code, e.a, e.b, e.c) & mask;
    while (table[i] != null) i = (i + 1) & mask;
    table[i] = e;
  }

  private static int hash(int code, int a, int b, int c) {
    int h = (((code * 31 + a) * 31 + b) * 31 + c) * 0x9E3779B9;
    return h ^ (h >>> 16);
  }

  private static String key(int code, int a, int b, int c) {
    Op op = Op.ALL[code / 4];
    if (op == Op.GEMM || op == Op.GEMM_BIAS_RELU || op == Op.GEMM_RELU_BACKWARD) {
      String t = switch (code % 4) {
        case 1 -> ":nt";
        case 2 -> ":tn";
        case 3 -> ":tt";
        default -> "";
      };
      return op.label + " " + a + "x" + b + "x" + c + t;
    }
    String shape = (a < 0 ? "" : a + "x") + b;
    if (op == Op.GATHER) return "gather " + shape + " from " + c + " rows";
    if (op == Op.SCATTER_ADD) return "scatterAdd " + shape + " into " + c + " rows";
    return op.label + " " + shape;
  }

  @Override
  public String name() {
    return inner.name();
  }

  @Override
  public int threads() {
    return inner.threads();
  }

  @Override
  public void forEachRowSlice(int rows, int columns, RowSlices.Range body) {
    inner.forEachRowSlice(rows, columns, body);
  }

  @Override
  public void gemm(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c) {
    timedGemm(Op.GEMM, transA, transB, alpha, a, b, beta, c, null);
  }

  @Override
  public void gemmBiasRelu(Tensor a, Tensor b, Tensor bias, Tensor c) {
    timedGemm(Op.GEMM_BIAS_RELU, false, false, 1f, a, b, 1f, c, bias);
  }

  @Override
  public void gemmReluBackward(boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c,
      Tensor gate) {
    timedGemm(Op.GEMM_RELU_BACKWARD, transA, transB, alpha, a, b, beta, c, gate);
  }

  /**
   * A product, counted under {@code op} with its shape; its flops are the product's alone.
   * {@code extra}: the bias of {@link #gemmBiasRelu}, the gate of {@link #gemmReluBackward}.
   */
  private void timedGemm(Op op, boolean transA, boolean transB, float alpha, Tensor a, Tensor b, float beta, Tensor c,
      Tensor extra) {
    long[] before = recording ? inner.crewTotals() : null;
    long t0 = System.nanoTime();
    switch (op) {
      case GEMM -> inner.gemm(transA, transB, alpha, a, b, beta, c);
      case GEMM_BIAS_RELU -> inner.gemmBiasRelu(a, b, extra, c);
      default -> inner.gemmReluBackward(transA, transB, alpha, a, b, beta, c, extra);
    }
    int m = c.rows(), n = c.cols(), k = transA ? a.rows() : a.cols();
    Entry e = count(op, (transA ? 2 : 0) + (transB ? 1 : 0), m, k, n, 2L * m * n * k, t0);
    if (e == null || before == null) return;
    long[] after = inner.crewTotals();
    if (after[0] == before[0]) return;
    if (e.slices == null) e.slices = new long[after.length];
    for (int i = 0; i < after.length; i++) e.slices[i] += after[i] - before[i];
  }

  @Override
  public void axpy(float alpha, Tensor x, Tensor y) {
    long t0 = System.nanoTime();
    inner.axpy(alpha, x, y);
    count(Op.AXPY, y, t0);
  }

  @Override
  public void scale(float alpha, Tensor x) {
    long t0 = System.nanoTime();
    inner.scale(alpha, x);
    count(Op.SCALE, x, t0);
  }

  @Override
  public void add(Tensor a, Tensor b, Tensor out) {
    long t0 = System.nanoTime();
    inner.add(a, b, out);
    count(Op.ADD, out, t0);
  }

  @Override
  public void mul(Tensor a, Tensor b, Tensor out) {
    long t0 = System.nanoTime();
    inner.mul(a, b, out);
    count(Op.MUL, out, t0);
  }

  @Override
  public void addRowVector(Tensor m, Tensor v) {
    long t0 = System.nanoTime();
    inner.addRowVector(m, v);
    count(Op.ADD_ROW_VECTOR, m, t0);
  }

  @Override
  public void columnSums(Tensor m, Tensor out) {
    long t0 = System.nanoTime();
    inner.columnSums(m, out);
    count(Op.COLUMN_SUMS, m, t0);
  }

  @Override
  public void rowSums(Tensor m, Tensor out) {
    long t0 = System.nanoTime();
    inner.rowSums(m, out);
    count(Op.ROW_SUMS, m, t0);
  }

  @Override
  public void rowMax(Tensor m, Tensor out) {
    long t0 = System.nanoTime();
    inner.rowMax(m, out);
    count(Op.ROW_MAX, m, t0);
  }

  @Override
  public void rowArgmax(Tensor m, int[] out) {
    long t0 = System.nanoTime();
    inner.rowArgmax(m, out);
    count(Op.ROW_ARGMAX, m, t0);
  }

  @Override
  public void relu(Tensor x, Tensor out) {
    long t0 = System.nanoTime();
    inner.relu(x, out);
    count(Op.RELU, x, t0);
  }

  @Override
  public void reluBackward(Tensor x, Tensor gradOut, Tensor gradIn) {
    long t0 = System.nanoTime();
    inner.reluBackward(x, gradOut, gradIn);
    count(Op.RELU_BACKWARD, x, t0);
  }

  @Override
  public void tanh(Tensor x, Tensor out) {
    long t0 = System.nanoTime();
    inner.tanh(x, out);
    count(Op.TANH, x, t0);
  }

  @Override
  public void tanhBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    long t0 = System.nanoTime();
    inner.tanhBackward(y, gradOut, gradIn);
    count(Op.TANH_BACKWARD, y, t0);
  }

  @Override
  public void sigmoid(Tensor x, Tensor out) {
    long t0 = System.nanoTime();
    inner.sigmoid(x, out);
    count(Op.SIGMOID, x, t0);
  }

  @Override
  public void sigmoidBackward(Tensor y, Tensor gradOut, Tensor gradIn) {
    long t0 = System.nanoTime();
    inner.sigmoidBackward(y, gradOut, gradIn);
    count(Op.SIGMOID_BACKWARD, y, t0);
  }

  @Override
  public float softmaxCrossEntropy(Tensor logits, int[] labels, Tensor probs, Tensor gradLogits) {
    long t0 = System.nanoTime();
    float loss = inner.softmaxCrossEntropy(logits, labels, probs, gradLogits);
    count(Op.SOFTMAX_CROSS_ENTROPY, logits, t0);
    return loss;
  }

  @Override
  public float logisticLoss(Tensor logits, float[] labels, Tensor probs, Tensor gradLogits) {
    long t0 = System.nanoTime();
    float loss = inner.logisticLoss(logits, labels, probs, gradLogits);
    count(Op.LOGISTIC_LOSS, logits, t0);
    return loss;
  }

  @Override
  public void gather(Tensor table, int[] ids, Tensor out) {
    long t0 = System.nanoTime();
    inner.gather(table, ids, out);
    count(Op.GATHER, 0, ids.length, table.cols(), table.rows(), 0, t0);
  }

  @Override
  public void scatterAdd(Tensor grad, int[] ids, Tensor tableGrad) {
    long t0 = System.nanoTime();
    inner.scatterAdd(grad, ids, tableGrad);
    count(Op.SCATTER_ADD, 0, ids.length, tableGrad.cols(), tableGrad.rows(), 0, t0);
  }

  @Override
  public void close() {
    inner.close();
  }
}
