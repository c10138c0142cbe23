package dev.overlap.executor.output.parquet;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.TaskContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;

/**
 * The task side of Spark's commit protocol for one attempt of a write task, as Spark's own file
 * writer drives it: the attempt's Hadoop context, its temporary files ({@link #create}), and then
 * {@link #commit} (the protocol moves them into place; Spark's output commit coordinator lets one
 * attempt per partition commit) or {@link #abort} (they are deleted).
 */
public final class TaskFiles {
  /**
   * What one task wrote, sent back to the driver with the protocol's message.
   *
   * @param gpu whether the GPU encoded it
   */
  public record Outcome(
      FileCommitProtocol.TaskCommitMessage message, long rows, long files, long bytes, boolean gpu)
      implements Serializable {}

  private final FileCommitProtocol committer;
  private final TaskAttemptContext context;
  private long files;
  private long bytes;

  private TaskFiles(FileCommitProtocol committer, TaskAttemptContext context) {
    this.committer = committer;
    this.context = context;
  }

  /** The running Spark task's attempt. */
  static TaskFiles open(FileCommitProtocol committer, Configuration jobConf, String jobTracker) {
    TaskContext ctx = TaskContext.get();
    // The attempt's number within the stage starts again at 0 when the stage is retried, while
    // tasks of the earlier stage attempt may still run: the task attempt id is unique (as Spark's
    // file writer uses it), so no two attempts share temporary files.
    return open(
        committer,
        jobConf,
        jobTracker,
        ctx.stageId(),
        ctx.partitionId(),
        (int) (ctx.taskAttemptId() & Integer.MAX_VALUE));
  }

  /** The attempt {@code attempt} of task {@code partition} of stage {@code stage}. */
  static TaskFiles open(
      FileCommitProtocol committer,
      Configuration jobConf,
      String jobTracker,
      int stage,
      int partition,
      int attempt) {
    JobID job = new JobID(jobTracker, stage);
    TaskAttemptID id = new TaskAttemptID(new TaskID(job, TaskType.MAP, partition), attempt);
    Configuration conf = new Configuration(jobConf);
    conf.set("mapreduce.job.id", job.toString());
    conf.set("mapreduce.task.id", id.getTaskID().toString());
    conf.set("mapreduce.task.attempt.id", id.toString());
    conf.setBoolean("mapreduce.task.ismap", true);
    conf.setInt("mapreduce.task.partition", 0);
    TaskAttemptContext context = new TaskAttemptContextImpl(conf, id);
    committer.setupTask(context);
    return new TaskFiles(committer, context);
  }

  TaskAttemptContext context() {
    return context;
  }

  /**
   * The path of a new temporary file of this attempt, named as Spark names its part files: {@code
   * part-00003-<job>-c000.snappy.parquet}, the counter telling a task's files apart.
   */
  String newFile(String extension) {
    String suffix = String.format(Locale.ROOT, "-c%03d", files) + extension;
    files++;
    return committer.newTaskTempFile(context, scala.Option.empty(), new FileNameSpec("", suffix));
  }

  /** Creates a new temporary file of this attempt; the bytes written to it are counted. */
  OutputStream create(String extension) throws IOException {
    Path p = new Path(newFile(extension));
    FileSystem fs = p.getFileSystem(context.getConfiguration());
    return new FilterOutputStream(fs.create(p, false)) {
      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        bytes += len;
      }

      @Override
      public void write(int b) throws IOException {
        out.write(b);
        bytes++;
      }
    };
  }

  /**
   * Counts the bytes of {@code path}, a file of {@link #newFile} another writer wrote and closed.
   */
  void addFileBytes(String path) throws IOException {
    Path p = new Path(path);
    bytes += p.getFileSystem(context.getConfiguration()).getFileStatus(p).getLen();
  }

  public long files() {
    return files;
  }

  long bytes() {
    return bytes;
  }

  /** Commits the attempt's files; its outcome for the driver. */
  public Outcome commit(long rows, boolean gpu) {
    return new Outcome(committer.commitTask(context), rows, files, bytes, gpu);
  }

  /** Deletes the attempt's files; a failure to is added to {@code cause}. */
  public void abort(Throwable cause) {
    try {
      committer.abortTask(context);
    } catch (RuntimeException | Error e) {
      cause.addSuppressed(e);
    }
  }
}
