package dev.overlap.executor.types;

/** A column whose type the GPU path cannot carry; raised before any work starts. */
public final class UnsupportedColumnException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public UnsupportedColumnException(String message) {
    super(message);
  }
}
