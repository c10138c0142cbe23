package dev.overlap.executor.pipeline;

/** The pipeline's stages, in the order a batch passes them. */
public enum Stage {
  PACK("host packing"),
  UPLOAD("copy to device"),
  COMPUTE("compute"),
  DOWNLOAD("copy to host");

  private final String label;

  Stage(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
