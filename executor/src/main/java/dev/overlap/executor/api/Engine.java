package dev.overlap.executor.api;

import java.util.Optional;
import java.util.ServiceLoader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Internal, not part of the API: what the public API calls into. Jobs must neither call nor
 * implement it, and it may change in any release; it is deliberately not {@link Public}, and no
 * {@link Public} signature shows it.
 *
 * <p>It is public only because of how the API finds its implementation: with {@link ServiceLoader},
 * so that this package depends on nothing of the implementation. The one implementation is the
 * plugin's Spark wiring ({@code spark.SparkEngine}, named in {@code META-INF/services}), in another
 * package, and a service type must be accessible to its provider. {@code ApiBoundaryTest} checks
 * that it is the only unmarked public type of this package.
 */
public interface Engine {

  /** See {@link GpuPartitions#map(Dataset, GpuKernel, PipelineReport)}. */
  Dataset<Row> map(Dataset<Row> input, GpuKernel kernel, PipelineReport report);

  /** See {@link GpuPartitions#write(Dataset, GpuKernel, ParquetOutput, PipelineReport)}. */
  Written write(Dataset<Row> input, GpuKernel kernel, ParquetOutput output, PipelineReport report);

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

  /** Holds the engine, loaded on first use. Internal, like {@link Engine}. */
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
