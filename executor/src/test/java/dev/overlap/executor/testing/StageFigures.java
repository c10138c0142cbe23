package dev.overlap.executor.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkContext;
import org.apache.spark.status.api.v1.AccumulableInfo;
import org.apache.spark.status.api.v1.StageData;
import org.apache.spark.status.api.v1.StageStatus;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What the stage page shows of Overlap's accumulators: read from Spark's status store (the store
 * the UI and the History Server render), once every event posted so far has reached it.
 *
 * @param stageId the stage
 * @param tasks its completed tasks
 * @param values each numeric {@code overlap.*} accumulator the stage shows, by name, as a number
 * @param texts each other one ({@code overlap.faultedFiles}), by name, as the page shows it
 */
public record StageFigures(
    int stageId, int tasks, Map<String, Long> values, Map<String, String> texts) {

  /** Every completed stage that shows at least one {@code overlap.*} accumulator, oldest first. */
  public static List<StageFigures> completed(SparkContext sc) throws TimeoutException {
    sc.listenerBus().waitUntilEmpty();
    List<StageData> stages =
        CollectionConverters.asJava(
            sc.statusStore()
                .stageList(List.of(StageStatus.COMPLETE), false, false, new double[0], List.of()));
    List<StageFigures> out = new ArrayList<>();
    for (StageData s : stages) {
      Map<String, Long> values = new LinkedHashMap<>();
      Map<String, String> texts = new LinkedHashMap<>();
      for (AccumulableInfo a : CollectionConverters.asJava(s.accumulatorUpdates())) {
        if (a.name() != null && a.name().startsWith("overlap.")) {
          if (a.value().matches("-?[0-9]+")) {
            values.put(a.name(), Long.parseLong(a.value()));
          } else {
            texts.put(a.name(), a.value());
          }
        }
      }
      if (!values.isEmpty() || !texts.isEmpty()) {
        out.add(new StageFigures(s.stageId(), s.numCompleteTasks(), values, texts));
      }
    }
    out.sort(java.util.Comparator.comparingInt(StageFigures::stageId));
    return out;
  }

  /** The stages that came after {@code before}'s last, each with its figures. */
  public static List<StageFigures> since(SparkContext sc, List<StageFigures> before)
      throws TimeoutException {
    int last = before.isEmpty() ? -1 : before.get(before.size() - 1).stageId();
    return completed(sc).stream().filter(s -> s.stageId() > last).toList();
  }

  /** The value shown for {@code name}; absent from the page: 0. */
  public long get(String name) {
    return values.getOrDefault(name, 0L);
  }
}
