package dev.overlap.executor.task;

import dev.overlap.executor.config.OverlapConf;
import dev.overlap.executor.config.ParquetDecodeMode;
import dev.overlap.executor.input.parquet.FilePlan;
import dev.overlap.executor.input.parquet.NotForGpu;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a Parquet partition is decoded on the GPU: its files' plans, or null when the host
 * decodes it (Spark's batches are then packed instead), because the job asks for the host or a file
 * needs it. The reason for the host is logged once per executor and kept in the report; {@code
 * spark.overlap.parquet.decode=GPU} fails the task instead.
 */
public final class ParquetPlanOrHost {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionRunner.class);
  // Each fallback reason is logged once per executor.
  private static final Set<String> FALLBACKS_LOGGED = ConcurrentHashMap.newKeySet();

  private ParquetPlanOrHost() {}

  /** The files' plans for the GPU's decode, or null for the host's. */
  static List<FilePlan> plans(TaskInput.Parquet in, OverlapConf job, JobReport report) {
    ParquetDecodeMode mode0 = job.get(OverlapConf.PARQUET_DECODE);
    if (mode0 == ParquetDecodeMode.HOST) {
      return null;
    }
    try {
      return in.input().plan(in.partition());
    } catch (NotForGpu e) {
      if (mode0 == ParquetDecodeMode.GPU) {
        throw new IllegalStateException(
            e.reason()
                + ". "
                + OverlapConf.PARQUET_DECODE.key()
                + "=GPU forbids decoding it on the host; set it to AUTO to let it.");
      }
      if (FALLBACKS_LOGGED.add(e.reason())) {
        LOG.info("Parquet decoded on the host: {}", e.reason());
      }
      if (report != null) {
        report.addFallback(e.reason());
      }
      return null;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
