package io.shardtrain.actors.config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/** The nearest names to a misspelt one: for "did you mean" in refusals of flags, commands and config keys. */
public final class Spelling {
  private Spelling() {}

  /**
   * The names at the least edit distance from {@code typed} (a swap of two neighbours counts one),
   * if that is small enough to be a typo: 1, or 2 for six characters and more; sorted.
   */
  public static List<String> closest(String typed, Collection<String> names) {
    int best = typed.length() >= 6 ? 2 : 1;
    List<String> near = new ArrayList<>();
    for (String name : new TreeSet<>(names)) {
      int d = editDistance(typed, name);
      if (d > best) continue;
      if (d < best) {
        best = d;
        near.clear();
      }
      near.add(name);
    }
    return near;
  }

  private static int editDistance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) d[i][0] = i;
    for (int j = 0; j <= b.length(); j++) d[0][j] = j;
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(d[i - 1][j - 1] + cost, Math.min(d[i - 1][j], d[i][j - 1]) + 1);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
