package dev.idem.cli;

import dev.idem.cli.ChaosWorkload.ChaosTimeline;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import javax.imageio.ImageIO;

/**
 * Writes a chaos run's {@code report.json} (a small hand-written JSON document: settings, counts, invariants, marks)
 * and {@code chart.png} (answers, errors and in-progress conflicts per second, with kills, instance restarts and the
 * PostgreSQL restart as vertical lines), drawn with java.awt in headless mode. Stateless.
 */
final class ChaosReport {
  private static final int WIDTH = 1200;
  private static final int HEIGHT = 560;
  private static final int LEFT = 70;
  private static final int RIGHT = 30;
  private static final int TOP = 50;
  private static final int BOTTOM = 60;

  private ChaosReport() {}

  /** A JSON value: string, number, boolean, null, Map (object) or List (array). */
  static String json(Object value) {
    StringBuilder sb = new StringBuilder();
    write(sb, value, 0);
    return sb.append('\n').toString();
  }

  private static void write(StringBuilder sb, Object v, int depth) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        sb.append(first ? "" : ",").append('\n').append("  ".repeat(depth + 1));
        first = false;
        string(sb, e.getKey().toString());
        sb.append(": ");
        write(sb, e.getValue(), depth + 1);
      }
      sb.append(m.isEmpty() ? "" : "\n" + "  ".repeat(depth)).append('}');
    } else if (v instanceof List<?> l) {
      sb.append('[');
      for (int i = 0; i < l.size(); i++) {
        sb.append(i == 0 ? "" : ", ");
        write(sb, l.get(i), depth + 1);
      }
      sb.append(']');
    } else {
      string(sb, v.toString());
    }
  }

  private static void string(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      switch (ch) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (ch < 0x20) {
            sb.append(String.format("\\u%04x", (int) ch));
          } else {
            sb.append(ch);
          }
        }
      }
    }
    sb.append('"');
  }

  static void writeJson(Path file, Map<String, Object> report) throws IOException {
    Files.writeString(file, json(report), StandardCharsets.UTF_8);
  }

  /** Draws the chart of the timeline into {@code file} (PNG). */
  static void writeChart(Path file, ChaosTimeline timeline, String title) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int seconds = Math.max(2, timeline.length());
    long max = 1;
    for (int i = 0; i < seconds; i++) {
      max = Math.max(max, Math.max(timeline.answers.get(i), Math.max(timeline.errors.get(i),
          timeline.conflicts.get(i))));
    }
    max = niceCeiling(max);
    BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, HEIGHT);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
      int plotW = WIDTH - LEFT - RIGHT;
      int plotH = HEIGHT - TOP - BOTTOM;
      g.setColor(new Color(0xEEEEEE));
      for (int i = 0; i <= 5; i++) {
        int y = TOP + plotH - plotH * i / 5;
        g.drawLine(LEFT, y, LEFT + plotW, y);
        g.setColor(Color.DARK_GRAY);
        g.drawString(Long.toString(max * i / 5), 8, y + 4);
        g.setColor(new Color(0xEEEEEE));
      }
      g.setColor(Color.DARK_GRAY);
      g.drawRect(LEFT, TOP, plotW, plotH);
      int step = Math.max(1, niceStep(seconds / 10));
      for (int s = 0; s < seconds; s += step) {
        int x = LEFT + (int) ((long) plotW * s / (seconds - 1));
        g.drawLine(x, TOP + plotH, x, TOP + plotH + 4);
        g.drawString(s + "s", x - 8, TOP + plotH + 18);
      }
      g.drawString("per second", 8, TOP - 10);
      g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
      g.drawString(title, LEFT, 24);
      g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
      for (ChaosTimeline.Mark m : timeline.marks) {
        int x = LEFT + (int) Math.round(plotW * Math.min(m.second(), seconds - 1) / (seconds - 1));
        Color c = switch (m.kind()) {
          case "kill" -> new Color(0xC62828);
          case "up" -> new Color(0x9E9E9E);
          default -> new Color(0x1565C0);
        };
        g.setColor(c);
        g.setStroke(m.kind().equals("up") ? new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
            new float[] {4f, 4f}, 0f) : new BasicStroke(2f));
        g.drawLine(x, TOP, x, TOP + plotH);
        if (!m.kind().equals("up")) {
          g.drawString(m.label(), x + 3, TOP + 12 + (m.kind().equals("kill") ? 0 : 14));
        }
      }
      g.setStroke(new BasicStroke(2f));
      series(g, timeline.answers, seconds, max, plotW, plotH, new Color(0x2E7D32));
      series(g, timeline.errors, seconds, max, plotW, plotH, new Color(0xEF6C00));
      series(g, timeline.conflicts, seconds, max, plotW, plotH, new Color(0x6A1B9A));
      legend(g, new Color(0x2E7D32), "answers (final, kept or not)", 0);
      legend(g, new Color(0xEF6C00), "errors (failed attempts, 5xx, unanswered)", 1);
      legend(g, new Color(0x6A1B9A), "409 in progress", 2);
      legend(g, new Color(0xC62828), "kill -9", 3);
      legend(g, new Color(0x9E9E9E), "instance healthy again", 4);
      legend(g, new Color(0x1565C0), "PostgreSQL restart", 5);
    } finally {
      g.dispose();
    }
    if (!ImageIO.write(image, "png", file.toFile())) {
      throw new IOException("no PNG writer in this JVM");
    }
  }

  private static void series(Graphics2D g, AtomicLongArray values, int seconds, long max, int plotW, int plotH,
      Color color) {
    g.setColor(color);
    int px = -1;
    int py = -1;
    for (int s = 0; s < seconds; s++) {
      int x = LEFT + (int) ((long) plotW * s / (seconds - 1));
      int y = TOP + plotH - (int) (plotH * values.get(s) / max);
      if (px >= 0) {
        g.drawLine(px, py, x, y);
      }
      px = x;
      py = y;
    }
  }

  private static void legend(Graphics2D g, Color color, String text, int row) {
    int x = LEFT + 10 + (row % 3) * 300;
    int y = HEIGHT - 26 + (row / 3) * 14;
    g.setColor(color);
    g.fillRect(x, y - 8, 14, 4);
    g.setColor(Color.DARK_GRAY);
    g.drawString(text, x + 20, y - 2);
  }

  private static long niceCeiling(long v) {
    long p = 1;
    while (p * 10 < v) {
      p *= 10;
    }
    for (long m : new long[] {1, 2, 5, 10}) {
      if (p * m >= v) {
        return p * m;
      }
    }
    return p * 10;
  }

  private static int niceStep(int v) {
    return (int) Math.max(1, niceCeiling(Math.max(1, v)));
  }
}
