package dev.overlap.jobs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.apache.spark.SparkException;
import org.junit.jupiter.api.Test;

/**
 * Failures whose line is found in the exception's causes: an out-of-memory error that Spark's file
 * scan wrapped in a {@code scala.MatchError}; a full disk.
 */
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

  /**
   * A full disk as a job sees it: the stage failure quotes its task's error after the task's name,
   * and its causes are Spark's write error, Hadoop's local file system's FSError and the disk's own
   * IOException. The line gives the disk's words, names the output, and exits 1.
   */
  @Test
  void aFullDiskIsOneLineInTheDisksOwnWords() throws Exception {
    IOException disk = new IOException("No space left on device");
    var ctor =
        Class.forName("org.apache.hadoop.fs.FSError").getDeclaredConstructor(Throwable.class);
    ctor.setAccessible(true);
    Throwable local = (Throwable) ctor.newInstance(disk);
    Throwable write =
        new SparkException("[TASK_WRITE_FAILED] Task failed while writing rows to out/etl.", local);
    Throwable job =
        new SparkException(
            "Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most recent"
                + " failure: Lost task 0.0 in stage 3.0 (TID 7) (localhost executor driver):"
                + " org.apache.hadoop.fs.FSError: java.io.IOException: No space left on device\n"
                + "\tat org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.write",
            write);
    ErrorLines.Line l =
        ErrorLines.of(job, "etl", new ErrorLines.Context("out/etl", InputFooters.NONE, "local[2]"));
    assertEquals(
        "etl ran out of disk space (No space left on device) writing --output 'out/etl' or Spark's"
            + " local folders ("
            + SparkFolders.localDirs()
            + "); free some space, or choose an --output or spark.local.dir on a disk with room",
        l.text());
    assertEquals(1, l.exit());
    assertFalse(l.usage());
  }
}
