#!/usr/bin/env bash
# Runs the GPU tests and the benchmarks on a GPU machine that received the bundle from
# ../shared/gpu-bundle/pack.sh (see docs/benchmarks.md). Logs go to $OUT (or ./gpu-out).
#   tools/gpu-suite.sh [tests] [copy] [spark] [rapids] [embed] [class:NAME ...]    default: the first three
#     embed: EmbeddingBenchmark (env EMBED_ROWS, RUNS, SLOTS)
#     class:NAME: the one test class NAME (dev.overlap..., of any module: executor, ml, jobs), its
#     tests whatever their tags (recv.sh's test command scans the whole class path, so it cannot
#     select a class)
#     rapids: the tests tagged rapids (both plugins in one session), with the RAPIDS Accelerator's
#     jar from pack.sh --rapids on the class path in place of cuDF's
#   env: COPY_MODE (main or diag; default diag), CHUNKS, SPARK_GB, PASSES, SLOTS
# What a step writes is removed when it ends (its size goes to $out/cleanup.txt): the benchmarks'
# folders (/tmp/overlap-bench, /tmp/overlap-embed) and a folder of its own that is the JVMs'
# java.io.tmpdir (test folders, Spark's local folders).
set -uo pipefail
out="${OUT:-gpu-out}"
mkdir -p "$out"
mapfile -t jvm_options <conf/jvm-options.txt
java_options="${jvm_options[*]} -Dai.rapids.refcount.debug=true ${EXTRA_JAVA_OPTS:-}"
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(tests copy spark)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
# Removes what step $1 wrote: the folders after it, saying how large each was.
clean_up() {
  local step="$1" d
  shift
  for d in "$@"; do
    [[ -e "$d" ]] || continue
    echo "$step: removing $d ($(du -sh "$d" 2>/dev/null | cut -f1))" | tee -a "$out/cleanup.txt"
    rm -rf "$d"
  done
}
rc=0
for s in "${steps[@]}"; do
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/overlap-suite.XXXXXX")"
  export JDK_JAVA_OPTIONS="$java_options -Djava.io.tmpdir=$scratch"
  written=("$scratch")
  case "$s" in
    tests)
      bash .gpu-bundle/recv.sh test --include-tag gpu --details=tree 2>&1 | tee "$out/gpu-tests.log" | tail -60
      rc=$((rc | PIPESTATUS[0])) ;;
    rapids)
      # shellcheck disable=SC2016 # expanded by the shell recv.sh starts
      bash .gpu-bundle/recv.sh run bash -c '
        : "${GPU_BUNDLE_RAPIDS_JAR:?the RAPIDS jar has not arrived: pack with --rapids}"
        lib="$(dirname "$(tr : "\n" <<<"$GPU_BUNDLE_CP" | grep "\.jar$" | head -1)")"
        cp="$(tr : "\n" <<<"$GPU_BUNDLE_CP" | grep -v "/cudf-[^/]*\.jar$" | paste -sd: -):$GPU_BUNDLE_RAPIDS_JAR"
        exec java -jar "$lib/junit-platform-console-standalone.jar" execute --class-path "$cp" \
          --select-class dev.overlap.executor.api.RapidsInputGpuTest --include-tag rapids --details=tree' \
        2>&1 | tee "$out/rapids-tests.log" | tail -60
      rc=$((rc | PIPESTATUS[0])) ;;
    copy)
      bash .gpu-bundle/recv.sh java -Xmx24g dev.overlap.executor.bench.CopyComputeBenchmark "${CHUNKS:-64}" 128 5 "${COPY_MODE:-diag}" \
        2>&1 | grep -v ' INFO ' | tee "$out/copy-compute.log" | tail -30
      rc=$((rc | PIPESTATUS[0])) ;;
    spark)
      written+=(/tmp/overlap-bench)
      bash .gpu-bundle/recv.sh java -Xmx64g dev.overlap.executor.bench.SparkPipelineBenchmark /tmp/overlap-bench \
        "${SPARK_GB:-16}" "${PASSES:-6}" "${SLOTS:-8}" 2>&1 | grep -v ' INFO ' | tee "$out/spark-bench.log" | tail -45
      rc=$((rc | PIPESTATUS[0])) ;;
    embed)
      written+=(/tmp/overlap-embed)
      bash .gpu-bundle/recv.sh java -Xmx64g dev.overlap.executor.bench.EmbeddingBenchmark /tmp/overlap-embed \
        "${EMBED_ROWS:-10000000}" "${RUNS:-3}" "${SLOTS:-16}" 2>&1 | grep -v ' INFO ' | tee "$out/embed-bench.log" | tail -25
      rc=$((rc | PIPESTATUS[0])) ;;
    class:*)
      name="${s#class:}"
      # shellcheck disable=SC2016 # expanded by the shell recv.sh starts
      CLASS="$name" bash .gpu-bundle/recv.sh run bash -c '
        lib="$(dirname "$(tr : "\n" <<<"$GPU_BUNDLE_CP" | grep "\.jar$" | head -1)")"
        exec java -jar "$lib/junit-platform-console-standalone.jar" execute \
          --class-path "$GPU_BUNDLE_CP" --select-class "$CLASS" --details=tree' \
        2>&1 | tee "$out/class-${name##*.}.log" | tail -40
      rc=$((rc | PIPESTATUS[0])) ;;
    *) echo "unknown step $s" >&2; rm -rf "$scratch"; exit 2 ;;
  esac
  clean_up "$s" "${written[@]}"
done
exit "$rc"
