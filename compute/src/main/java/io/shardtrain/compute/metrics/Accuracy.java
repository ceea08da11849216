package io.shardtrain.compute.metrics;

/** Classification accuracy: the fraction of predicted class ids equal to the labels. */
public final class Accuracy {
  private Accuracy() {}

  /** Correct predictions over all predictions; at least one example is required. */
  public static double of(int[] predicted, int[] labels) {
    long correct = correct(predicted, labels);
    if (labels.length == 0) {
      throw new IllegalArgumentException("accuracy of zero examples is undefined");
    }
    return (double) correct / labels.length;
  }

  /** How many predictions equal their labels; sums of these merge across workers exactly. */
  public static long correct(int[] predicted, int[] labels) {
    if (predicted == null || labels == null) {
      throw new IllegalArgumentException("predicted and labels must not be null");
    }
    if (predicted.length != labels.length) {
      throw new IllegalArgumentException("predicted of length " + predicted.length
          + " and labels of length " + labels.length + " differ");
    }
    long correct = 0;
    for (int i = 0; i < labels.length; i++) {
      if (predicted[i] == labels[i]) correct++;
    }
    return correct;
  }
}
