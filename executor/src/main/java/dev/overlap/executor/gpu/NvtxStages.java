package dev.overlap.executor.gpu;

import ai.rapids.cudf.NvtxColor;
import ai.rapids.cudf.NvtxRange;
import dev.overlap.executor.api.PipelineStage;
import dev.overlap.executor.pipeline.StageListener;
import dev.overlap.executor.pipeline.StageRun;

/**
 * An NVTX range around every stage, on the thread that runs it, so that an Nsight Systems profile
 * names the pipeline's work ("overlap pack", "overlap upload", ...). NVTX calls load cuDF's native
 * code: this listener is set only on a GPU executor's pipeline. Without a profiler attached a push
 * and a pop cost a few tens of nanoseconds.
 */
public final class NvtxStages implements StageListener {
  private static final String[] NAMES = new String[PipelineStage.values().length];
  private static final NvtxColor[] COLORS = new NvtxColor[PipelineStage.values().length];

  static {
    for (PipelineStage s : PipelineStage.values()) {
      NAMES[s.ordinal()] = "overlap " + s.name().toLowerCase(java.util.Locale.ROOT);
      COLORS[s.ordinal()] =
          switch (s) {
            case PACK -> NvtxColor.YELLOW;
            case UPLOAD -> NvtxColor.BLUE;
            case COMPUTE -> NvtxColor.GREEN;
            case DOWNLOAD -> NvtxColor.PURPLE;
          };
    }
  }

  @Override
  public void stageStarted(StageRun run) {
    int at = run.stage().ordinal();
    NvtxRange.pushRange(NAMES[at], COLORS[at]);
  }

  @Override
  public void stageEnded(StageRun run, long endNanos, boolean ok) {
    NvtxRange.popRange();
  }
}
