package dev.overlap.executor.pack;

/** A column whose type the GPU path cannot carry; raised before any work starts. */
public final class UnsupportedColumnException extends IllegalArgumentException {
  public UnsupportedColumnException(String message) {
    super(message);
  }
}
