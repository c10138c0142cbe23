package dev.overlap.jobs.cli;

import java.util.List;
import java.util.ServiceLoader;

/**
 * The launcher's jobs, in the order usage lists them: those {@code
 * META-INF/services/dev.overlap.jobs.cli.JobCommand} names, loaded once.
 */
public final class JobCommands {
  private static final List<JobCommand> ALL =
      ServiceLoader.load(JobCommand.class, JobCommand.class.getClassLoader()).stream()
          .map(ServiceLoader.Provider::get)
          .toList();

  private JobCommands() {}

  /** Every job. */
  public static List<JobCommand> all() {
    return ALL;
  }

  /** The jobs' names, in order. */
  static List<String> names() {
    return ALL.stream().map(JobCommand::name).toList();
  }

  /** The job named {@code name}; null when there is none. */
  public static JobCommand named(String name) {
    return ALL.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
  }
}
