package io.shardtrain.samples.report;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.XYPlot;

/** How the reports draw a chart: white background, light grid, a legend, 900 x 500 pixels. */
final class Charts {
  private Charts() {}

  static void savePng(Path file, String title, XYPlot plot) throws IOException {
    plot.setBackgroundPaint(Color.WHITE);
    plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
    plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
    JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
    chart.setBackgroundPaint(Color.WHITE);
    ChartUtils.saveChartAsPNG(file.toFile(), chart, 900, 500);
  }
}
