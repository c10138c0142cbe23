package dev.overlap.features;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamPair;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The encoder and its model on disk, in Spark ML's layout, so that {@code PipelineModel} saves and
 * loads them among its stages: {@code metadata/} holds one line of JSON (the class, uid, timestamp,
 * Spark version, params, defaults, and the model's own fields with its format version), {@code
 * data/} the fitted statistics as Parquet, one row per encoded column. A save goes to a hidden
 * folder beside the path and is put in place whole; an earlier model is replaced only with {@code
 * overwrite()}, only once the new one is complete, and a folder that is not a saved model never. An
 * earlier model a killed save left aside is put back by the next save to the same path.
 */
final class ModelFiles {
  /**
   * The format this release writes: 2 adds each vocabulary value's count and the features each kind
   * gets ({@code made}), which a release reading only format 1 would ignore and so make other
   * columns; 3 adds the params keepInputs, outputCol and outputType, and the order of outputCol's
   * features ({@code vectorFeatures}); 4 leaves a number's {@code _imputed} out of the vector where
   * its {@code _std} is there, and adds labelCol, excludeCols and the columns they left out ({@code
   * leftOut}). This release reads 1 to 4; a model of format 3 or earlier keeps its vector's order.
   */
  static final int FORMAT = 4;

  /** The oldest format this release reads. */
  static final int OLDEST_FORMAT = 1;

  static final ObjectMapper JSON = new ObjectMapper();

  static final StructType COLUMNS =
      new StructType()
          .add("name", DataTypes.StringType, false)
          .add("kind", DataTypes.StringType, false)
          .add("nullable", DataTypes.BooleanType, false)
          .add("floating", DataTypes.BooleanType, false)
          .add("missing", DataTypes.LongType, false)
          .add("nonFinite", DataTypes.LongType, false)
          .add("mean", DataTypes.DoubleType, false)
          .add("scale", DataTypes.DoubleType, false)
          .add("scaledStd", DataTypes.DoubleType, false)
          .add("nonNegative", DataTypes.BooleanType, false)
          .add("meanEpoch", DataTypes.LongType, false)
          .add("mode", DataTypes.StringType, false)
          .add("vocabulary", DataTypes.createArrayType(DataTypes.StringType, false), false)
          .add("vocabularyCounts", DataTypes.createArrayType(DataTypes.LongType, false), false)
          .add("fill", DataTypes.DoubleType, false);

  private ModelFiles() {}

  /** Writes a stage's params and, for a model, its plan. */
  static final class Writer extends MLWriter {
    private final Params stage;

    Writer(Params stage) {
      this.stage = stage;
    }

    @Override
    public void save(String path) throws IOException {
      SparkSession spark = sparkSession();
      FileSystem fs = new Path(path).getFileSystem(spark.sparkContext().hadoopConfiguration());
      Path target = fs.makeQualified(new Path(path));
      restoreInterrupted(fs, target);
      boolean exists = fs.exists(target);
      if (exists && !shouldOverwrite()) {
        throw new IOException(
            "Path "
                + path
                + " already exists. To overwrite it, use write().overwrite().save(path)");
      }
      if (exists && !fs.exists(new Path(target, "metadata"))) {
        throw new IOException(
            "'"
                + path
                + "' exists and is not a saved model (it has no metadata folder), so it is"
                + " not replaced; choose another path");
      }
      Path parent = target.getParent();
      String id = UUID.randomUUID().toString();
      Path staging = new Path(parent, "." + target.getName() + ".overlap-staging-" + id);
      try {
        saveImpl(staging.toString());
      } catch (RuntimeException e) {
        fs.delete(staging, true);
        throw e;
      }
      Path previous = new Path(parent, "." + target.getName() + ".overlap-previous-" + id);
      if (exists && !fs.rename(target, previous)) {
        fs.delete(staging, true);
        throw new IOException("cannot move the earlier model '" + path + "' aside to replace it");
      }
      if (!fs.rename(staging, target)) {
        boolean restored = !exists || fs.rename(previous, target);
        fs.delete(staging, true);
        throw new IOException(
            "cannot put the new model in place at '"
                + path
                + "'"
                + (restored
                    ? "; the earlier one is as it was"
                    : "; the earlier one is in " + previous));
      }
      if (exists) {
        fs.delete(previous, true);
      }
    }

    /**
     * A save killed between its two renames left the earlier model only in {@code
     * .<name>.overlap-previous-<id>} beside the path: put it back before anything else, so that it
     * is replaced, if at all, under the same rules as any model.
     */
    private static void restoreInterrupted(FileSystem fs, Path target) throws IOException {
      if (fs.exists(target) || !fs.exists(target.getParent())) {
        return;
      }
      String prefix = "." + target.getName() + ".overlap-previous-";
      for (org.apache.hadoop.fs.FileStatus f : fs.listStatus(target.getParent())) {
        if (f.getPath().getName().startsWith(prefix)
            && fs.exists(new Path(f.getPath(), "metadata"))
            && fs.rename(f.getPath(), target)) {
          return;
        }
      }
    }

    @Override
    public void saveImpl(String path) {
      SparkSession spark = sparkSession();
      FeaturePlan plan = stage instanceof FeatureEncoderModel m ? m.plan : null;
      ObjectNode meta = JSON.createObjectNode();
      meta.put("class", stage.getClass().getName());
      meta.put("timestamp", System.currentTimeMillis());
      meta.put("sparkVersion", spark.version());
      meta.put("uid", stage.uid());
      meta.set("paramMap", params(stage.extractParamMap(), stage, true));
      meta.set("defaultParamMap", params(stage.extractParamMap(), stage, false));
      ObjectNode model = meta.putObject("overlap");
      model.put("format", FORMAT);
      if (plan != null) {
        model.put("rows", plan.rows);
        model.put("fittedAt", plan.fittedAt);
        model.put("fittedOn", plan.fittedOn);
        model.put("vocabularySize", plan.vocabularySize);
        strings(model.putArray("inputNames"), plan.inputNames);
        strings(model.putArray("unsupported"), plan.unsupported);
        strings(model.putArray("leftOut"), plan.leftOut);
        strings(model.putArray("vocabulariesFromSpark"), plan.vocabulariesFromSpark);
        strings(model.putArray("vectorFeatures"), FeatureNames.numericNames(plan));
        ObjectNode made = model.putObject("made");
        plan.made.forEach((kind, features) -> strings(made.putArray(kind.name()), features));
      }
      spark
          .createDataset(List.of(meta.toString()), Encoders.STRING())
          .coalesce(1)
          .write()
          .text(path + "/metadata");
      if (plan != null) {
        List<Row> rows = new ArrayList<>();
        for (FeaturePlan.Column c : plan.columns) {
          rows.add(
              RowFactory.create(
                  c.name,
                  c.kind.name(),
                  c.nullable,
                  c.floating,
                  c.missing,
                  c.nonFinite,
                  c.mean,
                  c.scale,
                  c.scaledStd,
                  c.nonNegative,
                  c.meanEpoch,
                  c.mode,
                  scala.jdk.javaapi.CollectionConverters.asScala(c.vocabulary).toSeq(),
                  scala.jdk.javaapi.CollectionConverters.asScala(c.vocabularyCounts).toSeq(),
                  c.fill));
        }
        spark.createDataFrame(rows, COLUMNS).coalesce(1).write().parquet(path + "/data");
      }
    }

    private static ObjectNode params(
        org.apache.spark.ml.param.ParamMap all, Params stage, boolean set) {
      ObjectNode out = JSON.createObjectNode();
      for (ParamPair<?> pair : scala.jdk.javaapi.CollectionConverters.asJava(all.toSeq())) {
        @SuppressWarnings("unchecked")
        Param<Object> p = (Param<Object>) pair.param();
        if (set ? stage.isSet(p) : stage.hasDefault(p) && !stage.isSet(p)) {
          try {
            out.set(
                p.name(),
                JSON.readTree(p.jsonEncode(set ? pair.value() : stage.getDefault(p).get())));
          } catch (IOException e) {
            throw new IllegalStateException("param " + p.name() + " cannot be saved", e);
          }
        }
      }
      return out;
    }

    private static void strings(ArrayNode to, List<String> values) {
      values.forEach(to::add);
    }
  }
}
