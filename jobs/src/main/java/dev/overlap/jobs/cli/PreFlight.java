package dev.overlap.jobs.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkConf;

/**
 * What {@link Main} checks before Spark starts, so that a mistake costs seconds and changes
 * nothing: the standalone master answers, the input exists, holds data and is no Delta or Iceberg
 * table ({@link TableFolders}; with {@code --format delta}, it is one Delta table), the output is
 * no mistake ({@link JobPaths}). Every refusal is a {@link UsageException}.
 */
public final class PreFlight {
  private PreFlight() {}

  /**
   * The job's output folder, checked against its input: {@code --output}, else {@code out/<job>} or
   * the job's own default ({@link JobCommand#defaultOutput}), replaced without {@code --overwrite}.
   * What a killed run left beside it is put right first.
   */
  public static String output(JobArgs a, JobPaths paths) {
    JobCommand command = JobCommands.named(a.job);
    boolean defaultOutput = !a.has("--output");
    String output = a.get("--output").orElse(command.defaultOutput(a));
    fileNames("--output", output);
    a.get("--input").ifPresent(in -> fileNames("--input", in));
    // Before anything else looks at the output: put right what a killed run left beside it.
    paths.recover(output);
    List<Path> inputs =
        !command.readsInput()
            ? List.<Path>of()
            : a.get("--input")
                .map(in -> paths.input(in, InputFormat.isDelta(a)))
                .orElse(List.of(paths.qualified(JobPaths.DEFAULT_DATA)));
    paths.checkOutputPlace(output, inputs);
    paths.checkExistingOutput(
        output,
        a.job,
        a.has(JobArgs.OVERWRITE) || defaultOutput,
        a.has(JobArgs.OVERWRITE_UNMARKED));
    Path out = paths.qualified(output);
    if (PathRelations.isLocal(out)) {
      java.nio.file.Path local = PathRelations.local(out);
      Creatable.notDangling(local, "--output '" + output + "'");
      Creatable.folder(local.getParent(), "--output '" + output + "'");
    }
    return output;
  }

  /**
   * What the footers of {@code --input}'s Parquet files say ({@link InputFooters}); refuses an
   * input whose data lies only in subfolders Spark does not read ({@link InputFiles}). A Delta
   * table's files are not looked at (its log names the current ones and their columns).
   */
  public static InputFooters inputFooters(JobArgs a, JobPaths paths) {
    if (a.get("--input").isEmpty()) {
      return InputFooters.NONE;
    }
    String input = a.get("--input").get();
    if (InputFormat.isDelta(a)) {
      paths.input(input, true);
      return InputFooters.NONE;
    }
    List<Path> matches = paths.input(input);
    // Footers of a remote store cost a request each: fewer of them there.
    int max = PathRelations.isLocal(paths.qualified(input)) ? InputFooters.MAX_FILES : 100;
    return InputFooters.read(paths.conf(), InputFiles.of(paths.fs(input), input, matches, max));
  }

  /** Refuses a local path whose characters this JVM's locale cannot put in a file name. */
  private static void fileNames(String option, String path) {
    if (path.matches("[A-Za-z][A-Za-z0-9+.-]*:.*") && !path.startsWith("file:")) {
      return; // not a local file name
    }
    String enc = System.getProperty("sun.jnu.encoding", "UTF-8");
    try {
      if (java.nio.charset.Charset.forName(enc).newEncoder().canEncode(path)) {
        return;
      }
    } catch (IllegalArgumentException e) {
      return; // an encoding Java does not know: let the file system say
    }
    throw new UsageException(
        option
            + " '"
            + path
            + "' has characters that file names cannot hold in this locale (its encoding is "
            + enc
            + "); run with a UTF-8 locale, e.g. LANG=C.UTF-8");
  }

  /**
   * A standalone master that does not answer fails here, in seconds, rather than after Spark's
   * minute of registration retries.
   */
  public static void checkMaster(String master, SparkConf conf) {
    if (!master.startsWith("spark://")) {
      return;
    }
    StringBuilder tried = new StringBuilder();
    for (String hostPort : master.substring("spark://".length()).split(",")) {
      int colon = hostPort.lastIndexOf(':');
      String host = colon < 0 ? hostPort : hostPort.substring(0, colon);
      int port;
      try {
        port = colon < 0 ? 7077 : Integer.parseInt(hostPort.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new UsageException(
            "--master '"
                + master
                + "' has no valid port in '"
                + hostPort
                + "'; e.g. spark://host:7077");
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), 3000);
      } catch (IOException e) {
        tried
            .append(tried.length() == 0 ? "" : ", ")
            .append(host)
            .append(':')
            .append(port)
            .append(": ")
            .append(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        continue;
      }
      Optional<String> wrong = MasterProbe.ask(conf, host, port);
      if (wrong.isEmpty()) {
        return;
      }
      throw new UsageException(
          "--master "
              + master
              + ": "
              + host
              + ":"
              + port
              + " accepts connections but no Spark master answers there in "
              + MasterProbe.TIMEOUT_S
              + " s ("
              + wrong.get()
              + "); check the host and port (a standalone master listens on 7077 by default;"
              + " 8080 is its web page)");
    }
    throw new UsageException(
        "cannot reach the Spark master "
            + master
            + " (tried "
            + tried
            + "); is it running? Check --master, or start the master first");
  }
}
