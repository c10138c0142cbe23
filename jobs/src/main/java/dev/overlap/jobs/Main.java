package dev.overlap.jobs;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;

/**
 * The jobs' entry point: {@code <job> [options]}, run through {@code spark-submit.sh}.
 *
 * <pre>
 * generate --scale SF [--output DIR] [--overwrite]        TPC-H lineitem and orders as Parquet
 * etl      [--input DIR] [--output DIR] [--overwrite]     TPC-H Q1 and Q6 over lineitem
 * features [--input DIR] [--output DIR] [--overwrite] [--vocabulary N]
 * </pre>
 *
 * Without {@code --input}, etl and features run on an embedded default: TPC-H at scale factor 0.01,
 * generated into {@code ./data/} on first use. Without {@code --output}, results go to {@code
 * ./out/<job>}, replaced on each run.
 */
public final class Main {
  static final String DEFAULT_DATA = "data/tpch-sf0.01";
  static final double DEFAULT_SCALE = 0.01;
  static final List<String> JOBS = List.of("generate", "etl", "features");

  private Main() {}

  public static void main(String[] args) {
    try {
      System.exit(run(args));
    } catch (UsageException e) {
      System.err.println("overlap: " + e.getMessage());
      System.exit(2);
    }
  }

  static Map<String, String> parse(String[] args, Set<String> allowed, Set<String> flags) {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      if (flags.contains(a)) {
        opts.put(a, "true");
      } else if (allowed.contains(a)) {
        if (i + 1 >= args.length) {
          throw new UsageException(a + " needs a value");
        }
        opts.put(a, args[++i]);
      } else {
        throw new UsageException(
            "unknown option '" + a + "' for " + args[0] + "; options: " + allowed + " " + flags);
      }
    }
    return opts;
  }

  static int run(String[] args) {
    if (args.length == 0 || !JOBS.contains(args[0])) {
      throw new UsageException(
          (args.length == 0 ? "no job given" : "unknown job '" + args[0] + "'")
              + "; jobs: "
              + String.join(", ", JOBS));
    }
    String job = args[0];
    Map<String, String> o =
        parse(
            args, Set.of("--scale", "--input", "--output", "--vocabulary"), Set.of("--overwrite"));
    boolean overwrite = o.containsKey("--overwrite");
    SparkSession spark =
        SparkSession.builder()
            .appName("overlap " + job)
            // Features split timestamps in UTC on both paths.
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate();
    int slots = Math.max(1, spark.sparkContext().defaultParallelism());
    JobSummary summary = new JobSummary(job);
    long rowsOut;
    try {
      switch (job) {
        case "generate":
          {
            if (!o.containsKey("--scale")) {
              throw new UsageException("generate needs --scale, e.g. --scale 1");
            }
            double sf = Double.parseDouble(o.get("--scale"));
            String out = o.getOrDefault("--output", "data/tpch-sf" + o.get("--scale"));
            checkOutput(spark, out, overwrite || !o.containsKey("--output"));
            rowsOut = TpchGenerate.run(spark, sf, out);
            break;
          }
        case "etl":
          {
            String in = input(spark, o, "lineitem");
            String out = o.getOrDefault("--output", "out/etl");
            checkOutput(spark, out, overwrite || !o.containsKey("--output"));
            rowsOut = EtlJob.run(spark, in, out, summary);
            break;
          }
        case "features":
          {
            String in = input(spark, o, "lineitem");
            String out = o.getOrDefault("--output", "out/features");
            checkOutput(spark, out, overwrite || !o.containsKey("--output"));
            int vocab = Integer.parseInt(o.getOrDefault("--vocabulary", "20"));
            rowsOut = FeaturesJob.run(spark, in, out, vocab, summary);
            break;
          }
        default:
          throw new AssertionError(job);
      }
      System.out.print(summary.render(rowsOut, slots));
      return 0;
    } finally {
      spark.stop();
    }
  }

  /** The --input path, or the embedded default table, generated on first use. */
  private static String input(SparkSession spark, Map<String, String> o, String table) {
    String in = o.get("--input");
    if (in != null) {
      if (!exists(spark, in)) {
        throw new UsageException("input path '" + in + "' does not exist");
      }
      return in;
    }
    String dir = DEFAULT_DATA;
    if (!exists(spark, dir + "/" + table + "/_SUCCESS")) {
      System.out.println(
          "no --input: generating the embedded default (TPC-H SF " + DEFAULT_SCALE + ") in " + dir);
      delete(spark, dir);
      TpchGenerate.run(spark, DEFAULT_SCALE, dir);
    }
    return dir + "/" + table;
  }

  private static void checkOutput(SparkSession spark, String out, boolean replace) {
    if (exists(spark, out)) {
      if (!replace) {
        throw new UsageException(
            "output path '" + out + "' exists; pass --overwrite to replace it");
      }
      delete(spark, out);
    }
  }

  private static FileSystem fs(SparkSession spark, String p) throws IOException {
    return new Path(p).getFileSystem(spark.sparkContext().hadoopConfiguration());
  }

  private static boolean exists(SparkSession spark, String p) {
    try {
      return fs(spark, p).exists(new Path(p));
    } catch (IOException e) {
      throw new UsageException("cannot read path '" + p + "': " + e.getMessage());
    }
  }

  private static void delete(SparkSession spark, String p) {
    try {
      fs(spark, p).delete(new Path(p), true);
    } catch (IOException e) {
      throw new UsageException("cannot replace '" + p + "': " + e.getMessage());
    }
  }
}
