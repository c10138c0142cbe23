package dev.overlap.jobs.cli;

import java.io.PrintStream;

/**
 * The line a progress display draws again and again: on a terminal in place, with a carriage return
 * and blanks over what was on the line before (a longer line of its own, or Spark's stage progress
 * bar); elsewhere, a log say, each text on a line of its own.
 */
public final class TerminalLine {
  private final PrintStream out;
  private final boolean terminal;
  private final int width;
  private int lastLength;

  /**
   * @param terminal whether {@code out} is a terminal
   * @param width the terminal's width, to cover all that was on the line
   */
  public TerminalLine(PrintStream out, boolean terminal, int width) {
    this.out = out;
    this.terminal = terminal;
    this.width = width;
  }

  /** Draws {@code text} over the line. */
  public synchronized void draw(String text) {
    StringBuilder sb = new StringBuilder(terminal ? "\r" : "").append(text);
    int cover = terminal ? Math.max(lastLength, width - 1) : 0;
    while (sb.length() - 1 < cover) {
      sb.append(' ');
    }
    lastLength = text.length();
    out.print(terminal ? sb : sb.append('\n'));
    out.flush();
  }

  /** On a terminal, ends the line: what is printed next starts below the last text drawn. */
  public synchronized void end() {
    if (terminal) {
      out.println();
      out.flush();
    }
  }

  /** On a terminal, blanks what was drawn and puts the cursor back at the left margin. */
  public synchronized void erase() {
    if (terminal && lastLength > 0) {
      out.print("\r" + " ".repeat(Math.max(lastLength, width - 1)) + "\r");
      out.flush();
      lastLength = 0;
    }
  }
}
