package dev.overlap.jobs.cli;

/** The line a job prints for a failure, as the tests of other packages ask for it. */
public final class TestErrorLines {
  private TestErrorLines() {}

  /** The line for {@code t} in a run of {@code job} with {@code --output output}. */
  public static ErrorLines.Line of(Throwable t, String job, String output, String master) {
    return ErrorLines.of(t, job, new ErrorLines.Context(output, InputFooters.NONE, master));
  }
}
