#!/usr/bin/env bash
# Runs etl and features through ./spark-submit.sh on TPC-H, GPU path then CPU path, and compares
# their outputs. Meant for a GPU machine that received the bundle (run it through
# `bash .gpu-bundle/recv.sh run bash tools/gpu-jobs.sh`), where spark-submit.sh finds the Spark
# jars through jobs/target/spark-classpath.txt, written here from the bundle.
#   tools/gpu-jobs.sh [step ...]   steps: cds (the class-data archive, for the steps after it)
#                                  etl etl-host (Parquet decoded on the host) etl-cpu
#                                  features features-cpu compare-etl compare-features (default:
#                                  all), etl-metrics (etl with the event log, under $OUT/eventlog,
#                                  and Spark's console sink), features-pageable (results copied back into pageable
#                                  memory), etl-sql (etl with --engine spark-sql on Spark's CPU
#                                  engine; with a GPU, the plugin's SQL compiler runs its parts),
#                                  etl-sql-spark (the same with spark.overlap.sql.enabled=false:
#                                  Spark's own plan), compare-etl-sql-spark, etl-rapids (the same on the RAPIDS Accelerator, from
#                                  GPU_BUNDLE_RAPIDS_JAR), etl-both (etl's kernels with both
#                                  plugins, spark.overlap.rapids.input=AUTO), etl-both-always (the
#                                  same with ALWAYS: RAPIDS scans, its device batches go to the
#                                  kernels), compare-etl-sql, compare-etl-rapids, compare-etl-both
#                                  and compare-etl-both-always (each against etl's GPU path),
#                                  example and example-cpu (examples/' RevenueJob through
#                                  ./spark-submit.sh run, from its jar carried with the bundle),
#                                  compare-example; TPC-H is generated first when missing
#   RAPIDS_PINNED (spark.rapids.memory.pinnedPool.size of the RAPIDS steps, default 8g),
#   REPEAT (etl steps' --repeat, default 1), SCALE (default 10), DATA (default /tmp/overlap-tpch), OUT (logs), EXTRA_ARGS (appended to every
#   job's command line, e.g. "--conf spark.overlap.pinned.poolSize=32g")
set -uo pipefail
out="${OUT:-gpu-out}"
scale="${SCALE:-10}"
data="${DATA:-/tmp/overlap-tpch}/sf${scale}"
mkdir -p "$out" jobs/target/cudf
# The jars come with the bundle, built from these sources; there is no Maven here to rebuild.
export OVERLAP_PREBUILT=1
if [[ -n "${GPU_BUNDLE_CP:-}" ]]; then
  # The bundle's jars, minus test-only ones, are the Spark classpath; cuDF is shipped on its own.
  # Written only when it changes, and the jars copied with their times kept: spark-submit.sh takes
  # a class-data archive only when it is newer than both, so a second call keeps the one it made.
  tr ':' '\n' <<<"$GPU_BUNDLE_CP" | grep '\.jar$' | grep -v -e '/cudf-' -e junit -e scalatest \
    -e opentest4j -e apiguardian | paste -sd: - >jobs/target/spark-classpath.new
  if cmp -s jobs/target/spark-classpath.new jobs/target/spark-classpath.txt; then
    rm jobs/target/spark-classpath.new
  else
    mv jobs/target/spark-classpath.new jobs/target/spark-classpath.txt
  fi
  cudf="$(tr ':' '\n' <<<"$GPU_BUNDLE_CP" | grep '/cudf-.*\.jar$' | head -1)"
  [[ -e "jobs/target/cudf/$(basename "$cudf")" ]] || ln -s "$cudf" jobs/target/cudf/
  # The project's jars as spark-submit.sh finds them after a build: the jobs jar, and in lib/ what
  # it ships (the other modules' jars and the jobs' runtime dependencies).
  mkdir -p jobs/target/lib
  for j in "$GPU_BUNDLE_APP"/*/overlap-*.jar; do
    case "$j" in *-sources.jar | *-javadoc.jar | *-tests.jar) continue ;; esac
    case "$(basename "$j")" in
      overlap-jobs-*) cp -p "$j" jobs/target/ ;;
      overlap-executor-* | overlap-ml-*) cp -p "$j" jobs/target/lib/ ;;
    esac
  done
  tr ':' '\n' <<<"$GPU_BUNDLE_CP" | grep '/tpch-[^/]*\.jar$' | xargs -r cp -t jobs/target/lib/
fi
run() {
  local name="$1"
  shift
  local s rc
  s=$(date +%s%N)
  # shellcheck disable=SC2086 # EXTRA_ARGS is split into words on purpose
  set -- "$@" ${EXTRA_ARGS:-}
  ./spark-submit.sh "$@" >"$out/$name.log" 2>&1
  rc=$?
  echo "$name: rc=$rc, $((($(date +%s%N) - s) / 1000000)) ms: ./spark-submit.sh $*" | tee -a "$out/summary.txt"
  sed -n '/==== overlap/,$p' "$out/$name.log" | tee -a "$out/summary.txt"
}
mem=(--driver-memory "${DRIVER_MEMORY:-96g}")
[[ -d "$data/lineitem" ]] || run generate generate --scale "$scale" --output "$data" "${mem[@]}"
mapfile -t jvm_options <conf/jvm-options.txt
cmp() {
  # shellcheck disable=SC2153 # set by recv.sh
  java -Xmx64g "${jvm_options[@]}" -cp "$(cat jobs/target/spark-classpath.txt):$GPU_BUNDLE_APP/jobs/test-classes" \
    dev.overlap.jobs.CompareOutputs "$@" >"$out/compare.log" 2>&1
  local rc=$?
  if grep -qE '^(EQUAL|DIFFERENT)' "$out/compare.log"; then
    grep -E '^(EQUAL|DIFFERENT)' "$out/compare.log" | tee -a "$out/summary.txt"
  else
    echo "compare $*: rc=$rc, no verdict; its log's last lines:" | tee -a "$out/summary.txt"
    grep -v ' INFO ' "$out/compare.log" | tail -25 | tee -a "$out/summary.txt"
  fi
}
cpu=(--conf spark.overlap.enabled=false)
steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(etl etl-cpu features features-cpu compare-etl compare-features)
for step in "${steps[@]}"; do
  case "$step" in
    cds)
      # The class-data archive spark-submit.sh starts Java with (the build makes it on a build
      # machine; none travels with the bundle). The bundle's jlink runtime has no base archive,
      # which a dynamic archive needs: those are made first. The training run uses this script's
      # driver heap, so the archive is the one its runs take (without compressed pointers at 32 GB
      # or more).
      lib="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")/lib/server"
      [[ -f "$lib/classes.jsa" ]] || java -Xshare:dump >"$out/cds-base.log" 2>&1
      [[ -f "$lib/classes_nocoops.jsa" ]] || java -XX:-UseCompressedOops -Xshare:dump >>"$out/cds-base.log" 2>&1
      OVERLAP_CDS_DUMP=1 run cds-train etl --output /tmp/cds-train --overwrite "${mem[@]}"
      ls -l jobs/target/overlap-cds*.jsa 2>&1 | tee -a "$out/summary.txt" ;;
    etl) run etl-gpu etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-gpu --overwrite "${mem[@]}" ;;
    etl-metrics)
      # etl with the event log and Spark's console sink (every second): the stage accumulators and
      # the summary event in "$out/eventlog/", the executor's gauges in the run's log.
      mkdir -p "$out/eventlog"
      run etl-metrics etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-metrics --overwrite "${mem[@]}" \
        --conf spark.eventLog.enabled=true --conf spark.eventLog.dir="$(cd "$out/eventlog" && pwd)" \
        --conf 'spark.metrics.conf.*.sink.console.class=org.apache.spark.metrics.sink.ConsoleSink' \
        --conf 'spark.metrics.conf.*.sink.console.period=1' --conf 'spark.metrics.conf.*.sink.console.unit=seconds'
      grep -c 'plugin.dev.overlap' "$out/etl-metrics.log" | sed 's/^/etl-metrics: console sink lines naming the plugin: /' | tee -a "$out/summary.txt" ;;
    etl-host) run etl-host etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-host --overwrite "${mem[@]}" --conf spark.overlap.parquet.decode=HOST ;;
    etl-cpu) run etl-cpu etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-cpu --overwrite "${mem[@]}" "${cpu[@]}" ;;
    etl-rapids)
      OVERLAP_RAPIDS_JAR="${GPU_BUNDLE_RAPIDS_JAR:?pack with --rapids}" run etl-rapids etl \
        --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-rapids --overwrite --engine spark-sql "${mem[@]}" \
        --conf spark.plugins=com.nvidia.spark.SQLPlugin --conf spark.rapids.sql.concurrentGpuTasks=2 \
        --conf spark.rapids.memory.pinnedPool.size="${RAPIDS_PINNED:-8g}" ;;
    etl-both | etl-both-always)
      mode=AUTO
      [[ "$step" == etl-both-always ]] && mode=ALWAYS
      OVERLAP_RAPIDS_JAR="${GPU_BUNDLE_RAPIDS_JAR:?pack with --rapids}" run "$step" etl \
        --repeat "${REPEAT:-1}" --input "$data/lineitem" --output "/tmp/out-$step" --overwrite "${mem[@]}" \
        --conf spark.plugins=com.nvidia.spark.SQLPlugin,dev.overlap.executor.OverlapPlugin \
        --conf spark.overlap.rapids.input=$mode --conf spark.rapids.sql.concurrentGpuTasks=2 \
        --conf spark.rapids.memory.pinnedPool.size="${RAPIDS_PINNED:-8g}" ;;
    etl-sql) run etl-sql etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-sql --overwrite --engine spark-sql "${mem[@]}" ;;
    etl-sql-spark) run etl-sql-spark etl --repeat "${REPEAT:-1}" --input "$data/lineitem" --output /tmp/out-etl-sql-spark --overwrite --engine spark-sql "${mem[@]}" --conf spark.overlap.sql.enabled=false ;;
    features) run features-gpu features --input "$data/lineitem" --output /tmp/out-features-gpu --overwrite "${mem[@]}" ;;
    features-pageable) run features-pageable features --input "$data/lineitem" --output /tmp/out-features-pageable --overwrite "${mem[@]}" --conf spark.overlap.results.pinned=false ;;
    features-cpu) run features-cpu features --input "$data/lineitem" --output /tmp/out-features-cpu --overwrite "${mem[@]}" "${cpu[@]}" ;;
    compare-etl)
      cmp /tmp/out-etl-gpu/q1 /tmp/out-etl-cpu/q1 l_returnflag,l_linestatus
      cmp /tmp/out-etl-gpu/q6 /tmp/out-etl-cpu/q6 revenue ;;
    compare-etl-sql-spark)
      cmp /tmp/out-etl-sql/q1 /tmp/out-etl-sql-spark/q1 l_returnflag,l_linestatus
      cmp /tmp/out-etl-sql/q6 /tmp/out-etl-sql-spark/q6 revenue ;;
    compare-etl-sql)
      cmp /tmp/out-etl-gpu/q1 /tmp/out-etl-sql/q1 l_returnflag,l_linestatus
      cmp /tmp/out-etl-gpu/q6 /tmp/out-etl-sql/q6 revenue ;;
    compare-etl-rapids)
      cmp /tmp/out-etl-gpu/q1 /tmp/out-etl-rapids/q1 l_returnflag,l_linestatus
      cmp /tmp/out-etl-gpu/q6 /tmp/out-etl-rapids/q6 revenue ;;
    compare-etl-both | compare-etl-both-always)
      cmp /tmp/out-etl-gpu/q1 "/tmp/out-${step#compare-}/q1" l_returnflag,l_linestatus
      cmp /tmp/out-etl-gpu/q6 "/tmp/out-${step#compare-}/q6" revenue ;;
    example | example-cpu)
      jar=examples/target/overlap-example-0.1.0-SNAPSHOT.jar
      [[ -f "$jar" ]] || { echo "$step: no $jar: build examples/ and carry its jar" | tee -a "$out/summary.txt"; continue; }
      flags=()
      [[ "$step" == example-cpu ]] && flags=("${cpu[@]}")
      run "$step" run --class example.RevenueJob "${mem[@]}" ${flags[@]+"${flags[@]}"} "$jar" "$data/lineitem"
      grep -oE 'revenue [-0-9.E]*|^  (path|bottleneck|rows|wall) .*' "$out/$step.log" | tee -a "$out/summary.txt" ;;
    compare-example)
      # Spark's stage bar (on in run mode) may share the line: take the figure from anywhere in it.
      a="$(grep -o 'revenue [-0-9.E]*' "$out/example.log" | tail -1)"
      b="$(grep -o 'revenue [-0-9.E]*' "$out/example-cpu.log" | tail -1)"
      if [[ -n "$a" && "$a" == "$b" ]]; then echo "EQUAL example: $a on both paths"; else echo "DIFFERENT example: GPU '$a', CPU '$b'"; fi | tee -a "$out/summary.txt" ;;
    compare-features)
      # The GPU path's first pass merges partial statistics in another order than Spark's: the
      # standardized keys may differ in the last bits, so rows are matched by the keys' order.
      cmp /tmp/out-features-gpu /tmp/out-features-cpu rank:l_orderkey_std,l_linenumber_std ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
