package dev.overlap.executor.output.parquet;

import dev.overlap.executor.api.ParquetOutput;
import dev.overlap.executor.compute.DeviceResult;
import dev.overlap.executor.gpu.StreamPair;
import dev.overlap.executor.output.TaskOutput;
import dev.overlap.executor.pipeline.Download;
import dev.overlap.executor.pipeline.TaskDriver;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Iterator;
import org.apache.spark.sql.types.StructType;

/**
 * The write mode's output: the kernel's output encoded as Parquet on the device ({@link
 * ParquetEncode}), and the task thread writing the encoded bytes into the task's files under the
 * commit protocol ({@link TaskFiles}). One per task.
 */
public final class EncodedFiles implements TaskOutput<EncodedParquet, EncodedParquet> {
  private final ParquetOutput output;
  private final StructType outSchema;
  private final String kernelName;
  private ParquetEncode stages;
  private long rows;

  public EncodedFiles(ParquetOutput output, StructType outSchema, String kernelName) {
    this.output = output;
    this.outSchema = outSchema;
    this.kernelName = kernelName;
  }

  /**
   * The encoded bytes go to buffers from the pinned pool while it has room ({@link ParquetEncode}),
   * whatever {@code pinned} says: {@code spark.overlap.results.pinned} is the rows output's.
   */
  @Override
  public Download<DeviceResult, EncodedParquet> download(StreamPair streams, boolean pinned) {
    stages = new ParquetEncode(outSchema, output, kernelName);
    return stages;
  }

  @Override
  public long rowsOut(TaskDriver.Figures f) {
    return rows;
  }

  /**
   * Writes the task's encoded results into files of its attempt, in order, then the end of its last
   * file; each file is closed once complete. The encoding stages are closed at the end, whatever
   * happened.
   */
  public long writeTo(Iterator<EncodedParquet> results, TaskFiles files) throws IOException {
    byte[] scratch = new byte[1 << 20];
    OutputStream out = null;
    try {
      while (results.hasNext()) {
        EncodedParquet e = results.next();
        rows += e.rowCount();
        out = append(e, out, files, scratch);
      }
      if (stages != null) {
        try (EncodedParquet end = stages.finish()) {
          if (end != null) {
            out = append(end, out, files, scratch);
          }
        }
      }
      if (out != null) {
        OutputStream o = out;
        out = null;
        o.close();
      }
      return rows;
    } catch (IOException e) {
      throw closeAfter(e, out);
    } catch (RuntimeException e) {
      throw closeAfter(e, out);
    } catch (Error e) {
      throw closeAfter(e, out);
    } finally {
      if (stages != null) {
        stages.close();
      }
    }
  }

  /** Closes {@code out} and the stages after {@code failure}; failures to are added to it. */
  private <X extends Throwable> X closeAfter(X failure, OutputStream out) {
    try {
      if (out != null) {
        out.close();
      }
    } catch (IOException | RuntimeException | Error c) {
      failure.addSuppressed(c);
    }
    try {
      if (stages != null) {
        stages.close();
      }
    } catch (RuntimeException | Error c) {
      failure.addSuppressed(c);
    }
    return failure;
  }

  private OutputStream append(EncodedParquet e, OutputStream out, TaskFiles files, byte[] scratch)
      throws IOException {
    OutputStream o = out == null ? files.create(output.extension()) : out;
    try {
      e.writeTo(o, scratch);
    } catch (IOException x) {
      throw out == null ? closeAfter(x, o) : x;
    } catch (RuntimeException x) {
      throw out == null ? closeAfter(x, o) : x;
    }
    if (e.endsFile()) {
      o.close();
      return null;
    }
    return o;
  }
}
