package io.shardtrain.compute.optim;

import java.util.Locale;

/**
 * The serializable description of an optimizer: what a job configuration names and what the
 * parameter server receives to build the {@link Optimizer} of each block.
 *
 * <p>Fields a kind does not use are carried but ignored. {@code decoupledWeightDecay} selects
 * AdamW for {@link Kind#ADAM}; {@code initialAccumulator} is AdaGrad's starting accumulator.
 */
public record OptimizerSpec(
    Kind kind,
    float momentum,
    boolean nesterov,
    float beta1,
    float beta2,
    float eps,
    float weightDecay,
    float trustCoefficient,
    boolean decoupledWeightDecay,
    float initialAccumulator) {

  /** The update rules there are. */
  public enum Kind { SGD, MOMENTUM, ADAM, ADAGRAD, LARS }

  /** The names {@link #parse} accepts. */
  public static final String VALID_NAMES = "sgd, momentum, nesterov, adam, adamw, adagrad, lars";

  public OptimizerSpec {
    if (kind == null) {
      throw new IllegalArgumentException("optimizer kind must not be null");
    }
    Checks.decay("momentum", momentum);
    Checks.decay("beta1", beta1);
    Checks.decay("beta2", beta2);
    Checks.nonNegative("eps", eps);
    Checks.nonNegative("weightDecay", weightDecay);
    Checks.positive("trustCoefficient", trustCoefficient);
    Checks.nonNegative("initialAccumulator", initialAccumulator);
    if (nesterov && (kind != Kind.MOMENTUM || momentum == 0f)) {
      throw new IllegalArgumentException("nesterov needs kind MOMENTUM and momentum > 0, got kind "
          + kind + " and momentum " + momentum);
    }
    if (decoupledWeightDecay && kind != Kind.ADAM) {
      throw new IllegalArgumentException("decoupled weight decay (AdamW) needs kind ADAM, got " + kind);
    }
  }

  /**
   * PyTorch's defaults where it has them: momentum 0.9 for MOMENTUM and LARS, betas 0.9/0.999
   * and eps 1e-8 for Adam, eps 1e-10 for AdaGrad; trust coefficient 0.001 and eps 1e-9 for
   * LARS; no weight decay.
   */
  public static OptimizerSpec defaults(Kind kind) {
    if (kind == null) {
      throw new IllegalArgumentException("optimizer kind must not be null");
    }
    float momentum = kind == Kind.MOMENTUM || kind == Kind.LARS ? 0.9f : 0f;
    float eps = switch (kind) {
      case ADAGRAD -> 1e-10f;
      case LARS -> 1e-9f;
      default -> 1e-8f;
    };
    return new OptimizerSpec(kind, momentum, false, 0.9f, 0.999f, eps, 0f,
        Lars.DEFAULT_TRUST_COEFFICIENT, false, 0f);
  }

  /**
   * The defaults for a name, case-insensitive: {@value #VALID_NAMES}. {@code nesterov} is
   * MOMENTUM with Nesterov; {@code adamw} is ADAM with decoupled weight decay 0.01 (PyTorch's
   * AdamW default).
   */
  public static OptimizerSpec parse(String name) {
    String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    switch (n) {
      case "sgd": return defaults(Kind.SGD);
      case "momentum": return defaults(Kind.MOMENTUM);
      case "nesterov": {
        OptimizerSpec d = defaults(Kind.MOMENTUM);
        return new OptimizerSpec(d.kind, d.momentum, true, d.beta1, d.beta2, d.eps, d.weightDecay,
            d.trustCoefficient, false, d.initialAccumulator);
      }
      case "adam": return defaults(Kind.ADAM);
      case "adamw": {
        OptimizerSpec d = defaults(Kind.ADAM);
        return new OptimizerSpec(d.kind, d.momentum, false, d.beta1, d.beta2, d.eps, 0.01f,
            d.trustCoefficient, true, d.initialAccumulator);
      }
      case "adagrad": return defaults(Kind.ADAGRAD);
      case "lars": return defaults(Kind.LARS);
      default:
        throw new IllegalArgumentException("unknown optimizer '" + name + "'; valid names: " + VALID_NAMES);
    }
  }

  /** This spec with another weight decay. */
  public OptimizerSpec withWeightDecay(float weightDecay) {
    return new OptimizerSpec(kind, momentum, nesterov, beta1, beta2, eps, weightDecay, trustCoefficient,
        decoupledWeightDecay, initialAccumulator);
  }

  /** This spec with another momentum (MOMENTUM and LARS). */
  public OptimizerSpec withMomentum(float momentum) {
    return new OptimizerSpec(kind, momentum, nesterov, beta1, beta2, eps, weightDecay, trustCoefficient,
        decoupledWeightDecay, initialAccumulator);
  }

  /** The optimizer this spec describes. */
  public Optimizer create() {
    switch (kind) {
      case SGD: return new Sgd(weightDecay);
      case MOMENTUM: return new Momentum(momentum, nesterov, weightDecay);
      case ADAM: return new Adam(beta1, beta2, eps, weightDecay, decoupledWeightDecay);
      case ADAGRAD: return new AdaGrad(eps, initialAccumulator, weightDecay);
      case LARS: return new Lars(momentum, trustCoefficient, weightDecay, eps);
      default: throw new AssertionError(kind);
    }
  }
}
