#!/usr/bin/env bash
# A standalone Spark cluster on one machine with several GPUs: a Master and one Worker per GPU,
# each Worker advertising only its own GPU (two sharing one on a one-GPU machine for `fault`), then
# etl submitted through ./spark-submit.sh --master.
# Meant for a GPU machine that received the bundle (run it through
# `bash .gpu-bundle/recv.sh run bash tools/gpu-cluster.sh`), after tools/gpu-jobs.sh wrote
# jobs/target/spark-classpath.txt and generated the data (its `etl-cpu` step gives the reference).
#   tools/gpu-cluster.sh [plain] [kill] [fault]
#                                         plain: etl on the cluster; kill: the same with one
#                                         executor JVM killed (SIGKILL) KILL_AFTER seconds (default
#                                         0.5) after Q1's first task started; fault: the same with
#                                         the GPU decode of lineitem's first part file faulting
#                                         (a real illegal memory access, the test hook
#                                         overlap.test.faultOnDecodeOf) under onFatalError=EXIT:
#                                         the job must give the CPU's answer, the file read on the
#                                         host from then on, at most one executor lost
#   SCALE (default 10), DATA (default /tmp/overlap-tpch), OUT (logs), WORKERS (default one per
#   GPU, at least 2 with `fault`; Worker w advertises GPU w % GPUs, the cores split between them)
# Every step compares its output with /tmp/out-etl-cpu (tools/gpu-jobs.sh etl-cpu) and samples
# each GPU's utilisation every 0.5 s into $OUT/<step>-smi.csv.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here" || exit 1
out="${OUT:-gpu-out}"
scale="${SCALE:-10}"
data="${DATA:-/tmp/overlap-tpch}/sf${scale}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gpus="$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)"
workers="${WORKERS:-$gpus}"
# A fault takes its executor's GPU for good: a second Worker, even on one GPU, runs the retry.
[[ " ${*:-} " == *" fault "* ]] && ((workers < 2)) && workers=2
mapfile -t jvm_options <conf/jvm-options.txt

# Spark's launcher expects $SPARK_HOME/jars; the executors get their classpath from it.
home="$work/spark-home"
mkdir -p "$home/jars"
tr ':' '\n' <jobs/target/spark-classpath.txt | while read -r jar || [[ -n "$jar" ]]; do
  [[ -n "$jar" ]] && ln -sf "$jar" "$home/jars/"
done
export SPARK_HOME="$home" SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP=127.0.0.1

# Spark 4 starts executors with --add-modules=jdk.incubator.vector, which a Java runtime without
# that module (a jlink'd one, as the GPU bundle ships) refuses: the Workers then launch executors
# through a java that leaves that one option out.
java_home="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}"
worker_java_home="$java_home"
if ! "$java_home/bin/java" --list-modules 2>/dev/null | grep -q '^jdk.incubator.vector'; then
  mkdir -p "$work/java/bin"
  cat >"$work/java/bin/java" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do [[ "\$a" == --add-modules=jdk.incubator.vector ]] || args+=("\$a"); done
exec "$java_home/bin/java" "\${args[@]}"
EOF
  chmod +x "$work/java/bin/java"
  worker_java_home="$work/java"
fi

pids=()
daemon() {
  local log="$1"
  shift
  java -Xmx1g "${jvm_options[@]}" "$@" >"$log" 2>&1 &
  pids+=($!)
}
await() {
  local log="$1" text="$2"
  for _ in $(seq 1 600); do
    grep -q "$text" "$log" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "no '$text' in $log" >&2
  tail -20 "$log" >&2
  return 1
}
stop_all() {
  local p
  for p in "${pids[@]}"; do
    pkill -9 -P "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  pkill -9 -f CoarseGrainedExecutorBackend 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap stop_all EXIT

daemon "$out/master.log" -cp "$home/jars/*" org.apache.spark.deploy.master.Master \
  --host 127.0.0.1 --port 7077 --webui-port 0
await "$out/master.log" "I have been elected leader" || exit 1
cores=$(($(nproc) / workers))
for ((w = 0; w < workers; w++)); do
  # This Worker's GPU only: Spark hands it to the executor it launches.
  g=$((w % gpus))
  printf '#!/usr/bin/env bash\necho '"'"'{"name": "gpu", "addresses": ["%s"]}'"'"'\n' "$g" >"$work/gpu$w.sh"
  chmod +x "$work/gpu$w.sh"
  JAVA_HOME="$worker_java_home" daemon "$out/worker$w.log" -Dspark.worker.resource.gpu.amount=1 \
    -Dspark.worker.resource.gpu.discoveryScript="$work/gpu$w.sh" \
    -cp "$home/jars/*" org.apache.spark.deploy.worker.Worker spark://127.0.0.1:7077 \
    --host 127.0.0.1 --cores "$cores" --memory 48g --webui-port 0 --work-dir "$work/work$w"
  await "$out/worker$w.log" "Successfully registered with master" || exit 1
done
echo "cluster: 1 master, $workers workers of $cores cores and one GPU each (worker w on GPU w % $gpus)" |
  tee -a "$out/summary.txt"
# Two executors sharing a GPU share its memory and the host's: smaller heaps.
executor_memory=40g
((workers > gpus)) && executor_memory=24g

# submit NAME [EXECUTOR_JAVA_OPTION] [SPARK_SUBMIT_ARG...]
submit() {
  local name="$1" opts="-Dai.rapids.refcount.debug=true${2:+ $2}"
  shift
  (($# > 0)) && shift
  # SPARK_HOME is the daemons' (jars only): spark-submit.sh would look for bin/spark-submit there.
  env -u SPARK_HOME ./spark-submit.sh etl --master spark://127.0.0.1:7077 --input "$data/lineitem" \
    --output "/tmp/out-$name" --overwrite --driver-memory 32g \
    --conf spark.executor.cores="$cores" --conf spark.executor.memory="$executor_memory" \
    --conf spark.cores.max=$((cores * workers)) \
    --conf spark.executor.resource.gpu.amount=1 \
    --conf spark.task.resource.gpu.amount="$(awk "BEGIN{print 1/$cores}")" \
    --conf "spark.executor.extraJavaOptions=$opts" "$@" \
    >"$out/$name.log" 2>&1
}
# After the `fault` step, before report clears the executors' folders: where the fault was met,
# where the file was then read on the host, and how many executors the driver lost.
faults() {
  local name="$1" victim="$2"
  {
    echo "  fault provoked on $victim"
    echo "  executors lost: $(grep -oE "Lost executor [0-9]+" "$out/$name.log" | sort -u | wc -l)"
    grep -hE "Lost executor [0-9]+|exited with code|ExecutorLostFailure" "$out/$name.log" |
      head -5 | sed 's/^/  driver: /'
    grep -hE "Overlap: .*($victim|failed fatally|fenced)|Parquet decoded on the host: .*$victim" \
      "$out/$name.log" | head -10 | sed 's/^/  driver: /'
    local f
    for f in "$work"/work*/app-*/*/stderr; do
      [[ -f "$f" ]] || continue
      grep -hE "Overlap: .*($victim|failed fatally|fenced)|Parquet decoded on the host: .*$victim|could not (tell|ask) the driver" "$f" |
        head -10 | sed "s|^|  executor ${f#"$work"/}: |"
    done
  } | tee -a "$out/summary.txt"
}
compare() {
  java -Xmx16g "${jvm_options[@]}" -cp "$(cat jobs/target/spark-classpath.txt):$GPU_BUNDLE_APP/jobs/test-classes" \
    dev.overlap.jobs.CompareOutputs "$@" 2>&1 | grep -E '^(EQUAL|DIFFERENT)' | tee -a "$out/summary.txt"
}
report() {
  local name="$1" rc="$2" ms="$3"
  echo "$name: rc=$rc, $ms ms" | tee -a "$out/summary.txt"
  sed -n '/==== overlap/,$p' "$out/$name.log" | tee -a "$out/summary.txt"
  # Each executor's start line (naming its GPU), its shutdown figures and any leak cuDF reported.
  grep -rhE "Overlap: executor .* (on GPU|has no usable GPU)|Overlap: GPU .* at shutdown|LEAKED|leaked" \
    "$work"/work*/app-* 2>/dev/null | sed 's/^/  executor: /' | tee -a "$out/summary.txt"
  awk -F', ' '{n[$1]++; s[$1]+=$2+0; if ($2+0 > m[$1]) m[$1]=$2+0} END {for (g in n) printf "  GPU %s: %d samples, mean utilisation %.1f %%, max %d %%\n", g, n[g], s[g]/n[g], m[g]}' \
    "$out/$name-smi.csv" | sort | tee -a "$out/summary.txt"
  local f
  for f in "$work"/work*/app-*/*/stderr; do
    [[ -f "$f" ]] || continue
    echo "== ${f#"$work"/}"
    grep -E "Overlap|LEAK|leak|ERROR|Exception|Error" "$f" | head -40
    tail -5 "$f"
  done >"$out/$name-executors.txt"
  compare "/tmp/out-$name/q1" /tmp/out-etl-cpu/q1 l_returnflag,l_linestatus
  compare "/tmp/out-$name/q6" /tmp/out-etl-cpu/q6 revenue
  rm -rf "$work"/work*/app-*
}

for step in "${@:-plain kill}"; do
  for s in $step; do
    nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
      >"$out/etl-cluster-$s-smi.csv" &
    smi=$!
    start=$(date +%s%N)
    case "$s" in
      plain) submit "etl-cluster-$s"; rc=$? ;;
      kill)
        submit "etl-cluster-$s" &
        job=$!
        # Stage 0 is Spark's schema inference; once a task of a later stage (Q1's scan) runs on
        # an executor, wait KILL_AFTER seconds and kill one executor JVM.
        for _ in $(seq 1 600); do
          grep -rqsE "Running task .* in stage [1-9]" "$work"/work*/app-*/*/stderr && break
          sleep 0.1
        done
        sleep "${KILL_AFTER:-0.5}"
        victim="$(pgrep -f CoarseGrainedExecutorBackend | head -1)"
        if [[ -n "$victim" ]]; then
          echo "killing executor JVM $victim ($(tr '\0' ' ' </proc/"$victim"/cmdline | grep -o -- '--executor-id [0-9]*'))" |
            tee -a "$out/summary.txt"
          kill -9 "$victim"
        else
          echo "no executor JVM to kill" | tee -a "$out/summary.txt"
        fi
        wait "$job"
        rc=$? ;;
      fault)
        victim="$(find "$data/lineitem" -name 'part-*' -type f | sort | head -1)"
        victim="${victim##*/}"
        if [[ -z "$victim" ]]; then
          echo "no part file under $data/lineitem" >&2
          exit 2
        fi
        submit "etl-cluster-$s" "-Doverlap.test.faultOnDecodeOf=$victim" \
          --conf spark.overlap.gpu.onFatalError=EXIT
        rc=$?
        faults "etl-cluster-$s" "$victim" ;;
      *) echo "unknown step $s" >&2; exit 2 ;;
    esac
    kill "$smi"
    report "etl-cluster-$s" "$rc" $((($(date +%s%N) - start) / 1000000))
  done
done
