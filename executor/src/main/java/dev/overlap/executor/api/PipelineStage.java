package dev.overlap.executor.api;

/**
 * The pipeline's stages, in the order a batch passes them, as {@link PipelineReport} names them.
 */
@Public
public enum PipelineStage {
  PACK("host packing"),
  UPLOAD("copy to device"),
  COMPUTE("compute"),
  DOWNLOAD("copy to host");

  private final String label;

  PipelineStage(String label) {
    this.label = label;
  }

  /** The stage in words, for reports. */
  public String label() {
    return label;
  }
}
