package dev.overlap.executor.trace;

import dev.overlap.executor.api.PipelineStage;
import java.util.Locale;

/**
 * What a span of the timeline is: a stage of the GPU pipeline, or a partition through a kernel's
 * CPU implementation. Says which track a span goes on, its name in the files and its colour.
 */
public enum SpanKind {
  PACK("#e0a800"),
  UPLOAD("#1f77b4"),
  COMPUTE("#2ca02c"),
  DOWNLOAD("#9467bd"),
  /** One partition through the kernel's CPU implementation, on the task's thread. */
  CPU("#17becf");

  private final String color;

  SpanKind(String color) {
    this.color = color;
  }

  /** The span of a pipeline stage. */
  public static SpanKind of(PipelineStage s) {
    return switch (s) {
      case PACK -> PACK;
      case UPLOAD -> UPLOAD;
      case COMPUTE -> COMPUTE;
      case DOWNLOAD -> DOWNLOAD;
    };
  }

  /** Whether it runs on the task's own thread (else on the pipeline thread of its stage). */
  public boolean onTaskThread() {
    return this == PACK || this == CPU;
  }

  /** Its name in the files: "pack", "upload", "compute", "download", "cpu". */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Its fill colour in the SVG. */
  String color() {
    return color;
  }
}
