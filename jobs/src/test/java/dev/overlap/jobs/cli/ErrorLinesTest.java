package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.SparkException;
import org.junit.jupiter.api.Test;

/** An out-of-memory error that Spark's file scan wrapped in a {@code scala.MatchError}. */
class ErrorLinesTest {
  @Test
  void anOutOfMemoryErrorInsideAMatchErrorIsFound() {
    // What Spark's FileScanRDD throws for an OutOfMemoryError in the Parquet reader, as the job
    // sees it: the stage failure's cause.
    Throwable scan = new scala.MatchError(new OutOfMemoryError("Java heap space"));
    Throwable job = new SparkException("Job aborted due to stage failure", scan);
    assertEquals("java.lang.OutOfMemoryError: Java heap space", ErrorLines.hiddenOutOfMemory(job));
    assertNull(ErrorLines.hiddenOutOfMemory(new SparkException("x", new scala.MatchError("y"))));
    String line =
        FatalExit.outOfMemory(
            "features", "local[2]", "a task", "java.lang.OutOfMemoryError: Java heap space", "ok");
    assertTrue(
        line.startsWith(
            "features ran out of memory in a task (java.lang.OutOfMemoryError: Java heap space): in"
                + " local mode the tasks run in the driver, whose heap is "),
        line);
    assertTrue(line.endsWith("; ok"), line);
    // The job's line for it: the same words, and the exit code of a task out of memory.
    ErrorLines.Line l =
        ErrorLines.of(job, "features", new ErrorLines.Context(null, InputFooters.NONE, "local[2]"));
    assertEquals(52, l.exit());
    assertTrue(l.text().startsWith("features ran out of memory in a task (java.lang"), l.text());
    assertTrue(l.text().endsWith("; nothing was changed"), l.text());
  }
}
