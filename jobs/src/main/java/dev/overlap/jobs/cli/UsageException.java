package dev.overlap.jobs.cli;

/**
 * A mistake the user can fix: in the command line, a path, or the input's columns and types. Its
 * message is the one line the user sees (prefixed with {@code overlap: }); it names the option,
 * path, file, column or key at fault and says what to do. Raised before any work where possible;
 * the run then exits with code 2 and leaves every file as it was.
 */
public final class UsageException extends RuntimeException {
  public UsageException(String message) {
    super(message);
  }

  public UsageException(String message, Throwable cause) {
    super(message, cause);
  }
}
