package dev.overlap.jobs.features;

import dev.overlap.jobs.cli.JobArgs;
import dev.overlap.jobs.cli.UsageException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.spark.sql.types.StructType;

/**
 * What features writes beside the features, checked before any work: {@code --keep-inputs} keeps
 * every input column (by default only the columns the encoder does not encode pass through), and
 * {@code --vector-col NAME} writes every numeric feature as one column of {@code --vector-type}
 * ({@code vector}, the default; {@code array<float>}; {@code array<double>}) instead of one column
 * each.
 *
 * @param keepInputs whether every input column is written, before the features
 * @param vectorCol the one column of the features, or null for one column each
 * @param vectorType the encoder's outputType for {@code vectorCol}
 */
public record OutputOptions(boolean keepInputs, String vectorCol, String vectorType) {
  static final List<String> TYPES = List.of("vector", "array<float>", "array<double>");

  /** The features job's defaults: the features, and the columns it does not encode after them. */
  public static final OutputOptions NONE = new OutputOptions(false, null, TYPES.get(0));

  /** The output options of {@code a}, checked. */
  public static OutputOptions check(JobArgs a) {
    if (!a.job.equals("features")) {
      return NONE;
    }
    boolean anything = a.has("--keep-inputs") || a.has("--vector-col") || a.has("--vector-type");
    if (a.has("--fit-only") && anything) {
      throw new UsageException(
          "--fit-only writes no features: drop --keep-inputs, --vector-col and --vector-type");
    }
    String type = a.get("--vector-type").orElse(TYPES.get(0));
    if (!TYPES.contains(type)) {
      throw new UsageException(
          "--vector-type must be " + String.join(", ", TYPES) + ", got '" + type + "'");
    }
    if (a.has("--vector-type") && !a.has("--vector-col")) {
      throw new UsageException(
          "--vector-type is the type of --vector-col's column: give --vector-col NAME too");
    }
    return new OutputOptions(a.has("--keep-inputs"), a.get("--vector-col").orElse(null), type);
  }

  /**
   * Refuses a {@code --vector-col} named like an input column the output keeps (every column with
   * {@code --keep-inputs}; else those not among {@code encoded}), naming the option typed. Needs
   * only the input's schema, so it runs before any work.
   */
  public void checkAgainst(StructType input, String[] encoded) {
    if (vectorCol == null) {
      return;
    }
    Set<String> encodedNames = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    encodedNames.addAll(List.of(encoded));
    for (String c : input.fieldNames()) {
      if (c.equalsIgnoreCase(vectorCol) && (keepInputs || !encodedNames.contains(c))) {
        throw new UsageException(
            "--vector-col '"
                + vectorCol
                + "' is the name of input column '"
                + c
                + "', which the output keeps"
                + (keepInputs ? " (--keep-inputs)" : " (the encoder does not encode it)")
                + ": choose another name for --vector-col");
      }
    }
  }
}
