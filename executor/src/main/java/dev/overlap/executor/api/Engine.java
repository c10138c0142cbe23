package dev.overlap.executor.api;

import java.util.Optional;
import java.util.ServiceLoader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * What the public API calls into: the executor's implementation, found with {@link ServiceLoader}
 * so that this package depends on nothing of the implementation. Internal: not {@link Public}, and
 * implemented only by the plugin itself (its Spark wiring, named in {@code META-INF/services}).
 */
public interface Engine {

  /** See {@link GpuPartitions#map(Dataset, GpuKernel, PipelineReport)}. */
  Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report);

  /** See {@link GpuStatus#current()}. */
  GpuStatus status();

  /** See {@link PipelineReport#create(SparkSession)}. */
  PipelineReport newReport(SparkSession spark);

  /** See {@link PipelineTotals#current()}. */
  Optional<PipelineTotals> pipelineTotals();

  /** The implementation on the class path; loaded once, by the class loader of this interface. */
  static Engine get() {
    return Loaded.ENGINE;
  }

  /** Holds the engine, loaded on first use. */
  final class Loaded {
    private Loaded() {}

    static final Engine ENGINE =
        ServiceLoader.load(Engine.class, Engine.class.getClassLoader())
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "no "
                            + Engine.class.getName()
                            + " on the class path: the Overlap jar is"
                            + " incomplete"));
  }
}
