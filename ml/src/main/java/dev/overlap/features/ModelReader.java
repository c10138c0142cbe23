package dev.overlap.features;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** Reads what {@link ModelFiles.Writer} wrote; refuses a later format, naming it. */
final class ModelReader<T extends Params> extends MLReader<T> {
  private final Class<T> type;

  ModelReader(Class<T> type) {
    this.type = type;
  }

  @Override
  public T load(String path) {
    SparkSession spark = sparkSession();
    JsonNode meta;
    try {
      meta = ModelFiles.JSON.readTree(spark.read().text(path + "/metadata").first().getString(0));
    } catch (IOException e) {
      throw new IllegalArgumentException("'" + path + "' holds no readable model metadata", e);
    }
    String cls = meta.path("class").asText();
    if (!cls.equals(type.getName())) {
      throw new IllegalArgumentException(
          "'" + path + "' holds a " + cls + ", not a " + type.getName());
    }
    int format = meta.path("overlap").path("format").asInt(-1);
    if (format < ModelFiles.OLDEST_FORMAT || format > ModelFiles.FORMAT) {
      throw new IllegalArgumentException(
          "the model at '"
              + path
              + "' was saved in format "
              + format
              + "; this release of Overlap reads formats "
              + ModelFiles.OLDEST_FORMAT
              + " to "
              + ModelFiles.FORMAT
              + ": load it with the release that saved it, or fit it again");
    }
    String uid = meta.path("uid").asText();
    T stage;
    if (type == FeatureEncoder.class) {
      stage = type.cast(new FeatureEncoder(uid));
    } else {
      stage = type.cast(new FeatureEncoderModel(uid, plan(spark, path, meta.path("overlap"))));
    }
    setParams(stage, meta.path("defaultParamMap"), path, true);
    setParams(stage, meta.path("paramMap"), path, false);
    if (stage instanceof FeatureEncoderModel m) {
      fittedFeatures(m);
    }
    return stage;
  }

  /**
   * A model saved before it carried the kinds' feature params: they are set to the features its
   * plan makes, so that they say what it was fitted with.
   */
  private static void fittedFeatures(FeatureEncoderModel m) {
    Map<FeaturePlan.Kind, org.apache.spark.ml.param.StringArrayParam> params =
        Map.of(
            FeaturePlan.Kind.NUMERIC, m.numberFeatures(),
            FeaturePlan.Kind.DATE, m.dateFeatures(),
            FeaturePlan.Kind.TIMESTAMP, m.timestampFeatures(),
            FeaturePlan.Kind.STRING, m.stringFeatures());
    params.forEach(
        (kind, p) -> {
          List<String> made = m.plan.made.get(kind);
          if (!m.isSet(p) && made != null) {
            m.set(p, made.toArray(new String[0]));
          }
        });
  }

  /** Sets the saved params, or, with {@code defaults}, makes them the defaults, as saved. */
  private static void setParams(Params stage, JsonNode values, String path, boolean defaults) {
    for (Iterator<Map.Entry<String, JsonNode>> it = values.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!stage.hasParam(e.getKey())) {
        throw new IllegalArgumentException(
            "the model at '" + path + "' has a param this release does not know: " + e.getKey());
      }
      Param<Object> p = (Param<Object>) stage.getParam(e.getKey());
      Object value = p.jsonDecode(e.getValue().toString());
      if (defaults) {
        stage.setDefault(p, value);
      } else {
        stage.set(p, value);
      }
    }
  }

  /** Refuses a model folder without its data folder, naming the folder, before Spark does. */
  private static void requireData(SparkSession spark, String path) {
    org.apache.hadoop.fs.Path data = new org.apache.hadoop.fs.Path(path, "data");
    try {
      if (!data.getFileSystem(spark.sparkContext().hadoopConfiguration()).exists(data)) {
        throw new IllegalArgumentException(
            "the model at '"
                + path
                + "' has no data folder (its fitted statistics): give the whole folder the model"
                + " was saved to");
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static FeaturePlan plan(SparkSession spark, String path, JsonNode model) {
    FeaturePlan plan = new FeaturePlan(model.path("vocabularySize").asInt());
    plan.imputedInVector = model.path("format").asInt() <= 3;
    plan.rows = model.path("rows").asLong();
    plan.fittedAt = model.path("fittedAt").asLong();
    plan.fittedOn = model.path("fittedOn").asText();
    model.path("inputNames").forEach(n -> plan.inputNames.add(n.asText()));
    model.path("unsupported").forEach(n -> plan.unsupported.add(n.asText()));
    model.path("leftOut").forEach(n -> plan.leftOut.add(n.asText()));
    model.path("vocabulariesFromSpark").forEach(n -> plan.vocabulariesFromSpark.add(n.asText()));
    // Absent from models saved before features could be chosen: every kind got all of its own.
    model
        .path("made")
        .fields()
        .forEachRemaining(
            e -> {
              List<String> features = new java.util.ArrayList<>();
              e.getValue().forEach(n -> features.add(n.asText()));
              plan.made.put(FeaturePlan.Kind.valueOf(e.getKey()), List.copyOf(features));
            });
    requireData(spark, path);
    for (Row r : spark.read().parquet(path + "/data").collectAsList()) {
      FeaturePlan.Column c =
          new FeaturePlan.Column(
              r.getString(0),
              FeaturePlan.Kind.valueOf(r.getString(1)),
              r.getBoolean(2),
              r.getBoolean(3));
      c.nullable = r.getBoolean(2);
      c.missing = r.getLong(4);
      c.nonFinite = r.getLong(5);
      c.mean = r.getDouble(6);
      c.scale = r.getDouble(7);
      c.scaledStd = r.getDouble(8);
      c.nonNegative = r.getBoolean(9);
      c.meanEpoch = r.getLong(10);
      c.mode = r.getString(11);
      c.vocabulary = List.copyOf(r.getList(12));
      // Absent from models saved before the counts were kept: unknown there.
      c.vocabularyCounts =
          r.schema().getFieldIndex("vocabularyCounts").isDefined()
              ? List.copyOf(r.getList(r.fieldIndex("vocabularyCounts")))
              : List.of();
      // Absent from models saved before imputeStrategy: the mean, as they imputed.
      c.fill =
          r.schema().getFieldIndex("fill").isDefined() ? r.getDouble(r.fieldIndex("fill")) : c.mean;
      plan.columns.add(c);
    }
    plan.columns.sort(java.util.Comparator.comparingInt(c -> plan.inputNames.indexOf(c.name)));
    // Saved since format 3: outputCol's order, which must be the one this release makes.
    if (model.has("vectorFeatures")) {
      List<String> saved = new java.util.ArrayList<>();
      model.path("vectorFeatures").forEach(n -> saved.add(n.asText()));
      List<String> made = FeatureNames.numericNames(plan);
      if (!saved.equals(made)) {
        throw new IllegalArgumentException(
            "the model at '"
                + path
                + "' orders its outputCol's features "
                + saved
                + ", but this release would order them "
                + made
                + ": load it with the release that saved it, or fit it again");
      }
    }
    return plan;
  }
}
