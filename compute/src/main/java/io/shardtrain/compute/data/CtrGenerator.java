package io.shardtrain.compute.data;

import java.util.SplittableRandom;

/**
 * Generates a synthetic click-through dataset from a planted logistic model, so that a trained
 * model's AUC can be judged against the best achievable one ({@link CtrDataset#bayesAuc()}).
 *
 * <p>Each example has {@code fields} categorical values, drawn Zipf-like from a vocabulary of
 * {@code vocabularyPerField} (a few values are frequent, most are rare, as in real ad logs). Each
 * (field, value) pair is hashed to a global sparse id in {@code [0, hashSpace)}; collisions are
 * possible, as with real feature hashing. There are also {@code denseDim} standard normal dense
 * features. The click probability is {@code sigmoid(bias + sum of w[id] + wDense . x)} where
 * {@code w[id] ~ N(0, idWeightStd^2)} and {@code wDense ~ N(0, denseWeightStd^2)} are drawn from the
 * seed. Example {@code i} depends only on the seed and {@code i}, so any range of a dataset can be
 * generated on its own and equals the same range of a larger one.
 */
public final class CtrGenerator {
  /** Generator settings; {@link #defaults(long)} gives a moderate, learnable problem. */
  public record Config(int fields, int vocabularyPerField, int hashSpace, int denseDim, double zipfExponent,
      double idWeightStd, double denseWeightStd, double bias, long seed) {
    public Config {
      if (fields < 1 || vocabularyPerField < 1 || hashSpace < 1 || denseDim < 0) {
        throw new IllegalArgumentException("CTR config needs fields >= 1, vocabulary >= 1, hashSpace >= 1 and"
            + " denseDim >= 0; got fields=" + fields + ", vocabulary=" + vocabularyPerField + ", hashSpace="
            + hashSpace + ", denseDim=" + denseDim);
      }
      if (!(zipfExponent >= 0) || !(idWeightStd >= 0) || !(denseWeightStd >= 0) || !Double.isFinite(bias)) {
        throw new IllegalArgumentException("CTR config needs finite non-negative zipfExponent and weight scales"
            + " and a finite bias; got zipf=" + zipfExponent + ", idWeightStd=" + idWeightStd
            + ", denseWeightStd=" + denseWeightStd + ", bias=" + bias);
      }
    }

    /** 8 fields of 1000 values hashed into 2^16 ids, 4 dense features, Zipf exponent 1.1. */
    public static Config defaults(long seed) {
      return new Config(8, 1000, 1 << 16, 4, 1.1, 0.8, 0.5, -1.0, seed);
    }
  }

  private final Config config;
  private final float[] idWeights;
  private final float[] denseWeights;
  private final double[] zipfCdf;

  public CtrGenerator(Config config) {
    this.config = config;
    SplittableRandom r = new SplittableRandom(mix64(config.seed() ^ 0x5EEDC7A1L));
    idWeights = new float[config.hashSpace()];
    for (int i = 0; i < idWeights.length; i++) idWeights[i] = (float) (gaussian(r) * config.idWeightStd());
    denseWeights = new float[config.denseDim()];
    for (int i = 0; i < denseWeights.length; i++) denseWeights[i] = (float) (gaussian(r) * config.denseWeightStd());
    zipfCdf = new double[config.vocabularyPerField()];
    double sum = 0;
    for (int k = 0; k < zipfCdf.length; k++) {
      sum += 1.0 / Math.pow(k + 1, config.zipfExponent());
      zipfCdf[k] = sum;
    }
    for (int k = 0; k < zipfCdf.length; k++) zipfCdf[k] /= sum;
  }

  public Config config() {
    return config;
  }

  /** The planted weight of a sparse id. */
  public float idWeight(int id) {
    return idWeights[id];
  }

  /** The planted dense weights (a copy). */
  public float[] denseWeights() {
    return denseWeights.clone();
  }

  /** Examples {@code [0, n)}. */
  public CtrDataset generate(int n) {
    return generate(0, n);
  }

  /** Examples {@code [from, to)}; identical to the same rows of any larger generated range. */
  public CtrDataset generate(long from, long to) {
    if (from < 0 || to < from || to - from > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("bad example range [" + from + ", " + to + ")");
    }
    int n = (int) (to - from);
    int fields = config.fields();
    int dd = config.denseDim();
    if ((long) n * Math.max(fields, dd) > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(n + " examples are too many for one array");
    }
    int[] ids = new int[n * fields];
    float[] dense = new float[n * dd];
    float[] labels = new float[n];
    float[] probs = new float[n];
    for (int i = 0; i < n; i++) {
      SplittableRandom r = new SplittableRandom(mix64(config.seed() * 0x9E3779B97F4A7C15L + from + i));
      double logit = config.bias();
      for (int f = 0; f < fields; f++) {
        int value = zipf(r.nextDouble());
        int id = hashId(f, value, config.hashSpace());
        ids[i * fields + f] = id;
        logit += idWeights[id];
      }
      for (int j = 0; j < dd; j++) {
        float x = (float) gaussian(r);
        dense[i * dd + j] = x;
        logit += denseWeights[j] * x;
      }
      double p = 1.0 / (1.0 + Math.exp(-logit));
      probs[i] = (float) p;
      labels[i] = r.nextDouble() < p ? 1f : 0f;
    }
    return new CtrDataset(fields, dd, config.hashSpace(), ids, dense, labels, probs);
  }

  private int zipf(double u) {
    int lo = 0;
    int hi = zipfCdf.length - 1;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (zipfCdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The global sparse id of value {@code value} of field {@code field}: a stable hash, mod hashSpace. */
  public static int hashId(int field, int value, int hashSpace) {
    long h = mix64(((long) field << 32) ^ (value & 0xffffffffL) ^ 0xC7C7C7C7_00000000L);
    return (int) Long.remainderUnsigned(h, hashSpace);
  }

  /** The murmur3 64-bit finalizer: a stable, well-spread mix. */
  static long mix64(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  // Box-Muller by hand: the JDK's nextGaussian algorithm is not specified to stay the same.
  private static double gaussian(SplittableRandom r) {
    double u1 = 1.0 - r.nextDouble(); // in (0, 1], so log is finite
    double u2 = r.nextDouble();
    return Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}
