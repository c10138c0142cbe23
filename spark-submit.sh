#!/usr/bin/env bash
# The user's entry point: runs one of Overlap's jobs with the plugin enabled.
#
#   ./spark-submit.sh <job> [job options] [--master URL] [--conf key=value ...]
#
# Jobs: generate, etl, features (./spark-submit.sh --help for their options); run --class MAIN
# APP.jar [args] runs your own application with the plugin.
# With SPARK_HOME set, submits through $SPARK_HOME/bin/spark-submit; without it, through the
# Spark jars Maven resolved, on master local[*] unless --master says otherwise. Builds the project
# first when its jars are missing. OVERLAP_RAPIDS_JAR=/path/rapids-4-spark_2.13-26.08.1-cuda13.jar
# ships the RAPIDS Accelerator's jar instead of cuDF's (it carries the same classes) and puts it on
# the driver's class path, so that --conf spark.plugins=com.nvidia.spark.SQLPlugin runs Spark SQL
# (etl --engine spark-sql) on the GPU.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() {
  echo "spark-submit.sh: $*" >&2
  exit 2
}

usage() {
  case "${1:-}" in
    generate)
      cat <<'USAGE'
usage: ./spark-submit.sh generate --scale SF [--output DIR] [--overwrite] [spark options]

  TPC-H lineitem and orders as Parquet, in DIR/lineitem and DIR/orders (default
  data/tpch-sf<SF>). The same scale factor gives the same rows. SF 1 is about 0.3 GB.
USAGE
      ;;
    etl)
      cat <<'USAGE'
usage: ./spark-submit.sh etl [--input PATH [--format delta [--version N]]] [--output DIR]
                             [--overwrite] [--engine overlap|spark-sql] [--repeat N] [spark options]

  TPC-H Q1 and Q6 over a Parquet lineitem table (a folder, a file or a glob), written to
  DIR/q1 and DIR/q6 (default out/etl). Without --input: TPC-H SF 0.01, generated into
  data/tpch-sf0.01 on first use.
  --format delta: --input is a Delta Lake table's folder, read as a table (its latest
  version, or --version N); Delta's jars are shipped for it.
  --engine overlap: the queries' filters and partial aggregates run as Overlap's kernels
  (the default). --engine spark-sql: the same queries as Spark SQL's own aggregations, with
  the same output, to compare the two; with OVERLAP_RAPIDS_JAR set and
  --conf spark.plugins=com.nvidia.spark.SQLPlugin the RAPIDS Accelerator runs them.
  --repeat N: after writing, each query runs N-1 more times in the same process; the summary
  gives those warm runs' times and median (default 1: no repeat).
USAGE
      ;;
    features)
      cat <<'USAGE'
usage: ./spark-submit.sh features [--input PATH [--format delta [--version N]]] [--output DIR]
                                  [--overwrite] [--vocabulary N]
                                  [--save-model DIR | --model DIR] [--fit-only] [--keep-inputs]
                                  [--vector-col NAME [--vector-type T]] [spark options]

  Features from any Parquet input, by column type, written to DIR (default out/features).
  --format delta: --input is a Delta Lake table's folder, read as a table (its latest
  version, or --version N); Delta's jars are shipped for it.
  --vocabulary N: strings are indexed by their N most frequent values (1 or more; default 20).
  --save-model DIR: also save the fitted model there (an existing model: with --overwrite).
  --model DIR: apply a saved model instead of fitting one (same means, vocabularies, columns).
  --fit-only: with --save-model, fit and save the model and write no features.
  --keep-inputs: write every input column too, before the features (default: the features and
  the columns of types it does not encode).
  --vector-col NAME: every numeric feature in one column NAME instead of one column each;
  --vector-type vector (Spark ML's dense Vector, the default), array<float> or array<double>.
USAGE
      ;;
    run)
      cat <<'USAGE'
usage: ./spark-submit.sh run --class MAIN [--jars A.jar,B.jar] [spark options] APP.jar [app args]

  Your own application with the plugin on: its jar, the plugin's and cuDF's (or
  OVERLAP_RAPIDS_JAR) shipped, spark.plugins set, Spark's log lines in the run's log file.
  Everything after APP.jar goes to your main method unchanged.
  --class MAIN: the class whose main method runs.  --jars: more jars your application needs.
USAGE
      ;;
    *)
      cat <<'USAGE'
usage: ./spark-submit.sh <job> [job options] [spark options]      (./spark-submit.sh <job> --help)

jobs:
  generate --scale SF [--output DIR] [--overwrite]   TPC-H lineitem and orders as Parquet
  etl      [--input PATH] [--output DIR] [--overwrite] TPC-H Q1 and Q6 over lineitem
           [--engine overlap|spark-sql] [--repeat N]  (Overlap's kernels or Spark SQL's own)
  features [--input PATH] [--output DIR] [--overwrite] [--vocabulary N]
           [--save-model DIR | --model DIR] [--fit-only]    (fit a model, or apply a saved one)
  --format delta [--version N] (etl, features): --input is a Delta Lake table, read as a table
  run      --class MAIN [--jars JARS] APP.jar [args]   your own application, with the plugin

  Without --input, etl and features use TPC-H SF 0.01, generated into ./data/ on first use.
  Without --output, results go to ./out/<job> (generate: ./data/tpch-sf<SF>), replaced on each run.
USAGE
      ;;
  esac
  cat <<'USAGE'

outputs:
  A result is built beside its output folder and replaces it only when complete. An existing
  output is replaced only with --overwrite, and only when an earlier Overlap run of the same job
  wrote it (its _OVERLAP_OUTPUT file says so); --overwrite-unmarked replaces any other folder.
  Never accepted as an output: the input or a folder inside or around it, the current
  directory, the project folder, the home folder, / or a folder above one of them.

spark options:
  --master URL          default local[*]
  --conf key=value      any Spark or spark.overlap.* setting (repeatable)
  --driver-memory SIZE, --executor-memory SIZE, --executor-cores N, --total-executor-cores N
  --verbose             Spark's log lines and stack traces on the terminal too
USAGE
}

[[ $# -gt 0 ]] || { usage >&2; exit 2; }
case "$1" in
  -h | --help) usage; exit 0 ;;
  generate | etl | features | run) job="$1"; shift ;;
  -*) die "the job comes first: ./spark-submit.sh <job> [options]; jobs: generate, etl, features, run" ;;
  *) die "unknown job '$1'; jobs: generate, etl, features, run (see --help)" ;;
esac
for a in "$@"; do
  [[ "$a" == *.jar && "$job" == run ]] && break # the application's own arguments follow
  [[ "$a" == "-h" || "$a" == "--help" ]] && { usage "$job"; exit 0; }
done

# --- the RAPIDS Accelerator's jar, when asked for, before anything is built or started ----------
if [[ -n "${OVERLAP_RAPIDS_JAR:-}" ]]; then
  [[ -e "$OVERLAP_RAPIDS_JAR" ]] ||
    die "OVERLAP_RAPIDS_JAR=$OVERLAP_RAPIDS_JAR: no such file; set it to the RAPIDS Accelerator's jar (rapids-4-spark_2.13-26.08.1-cuda13.jar) or unset it"
  [[ -f "$OVERLAP_RAPIDS_JAR" && -r "$OVERLAP_RAPIDS_JAR" ]] ||
    die "OVERLAP_RAPIDS_JAR=$OVERLAP_RAPIDS_JAR is not a readable file; set it to the RAPIDS Accelerator's jar (rapids-4-spark_2.13-26.08.1-cuda13.jar) or unset it"
fi

# --- Java -------------------------------------------------------------------------------------
java_bin="java"
[[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]] && java_bin="${JAVA_HOME}/bin/java"
command -v "$java_bin" >/dev/null 2>&1 ||
  die "no Java found: install Java 17 or later, or set JAVA_HOME"
java_version="$("$java_bin" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')"
java_major="${java_version%%.*}"
[[ "$java_major" == "1" ]] && java_major="$(echo "$java_version" | cut -d. -f2)"
[[ "$java_major" =~ ^[0-9]+$ && "$java_major" -ge 17 ]] ||
  die "Java ${java_version:-unknown} found at $(command -v "$java_bin"); Overlap needs Java 17 or later (set JAVA_HOME)"

# --- arguments: Spark's own here; the job's go to the job, which checks them strictly --------
master=""
spark_args=()
job_args=()
driver_memory=""
verbose=0
value_of() { # option, remaining argument count, next argument
  [[ "$2" -ge 2 ]] || die "$1 needs a value"
  [[ "$3" != --* ]] || die "$1 needs a value, but the next argument is the option '$3'"
  [[ -n "$3" ]] || die "$1 needs a value, got an empty one"
}
# --driver-memory and --executor-memory: Spark refuses a heap below 1.5 times the 300 MiB it
# reserves (UnifiedMemoryManager), and a driver heap above the machine's memory cannot be had.
min_heap=$((450 * 1024 * 1024))
bytes_of() { # a size as Spark's --driver-memory takes it: a bare number is bytes (-Xmx's reading)
  local n="${1%[kKmMgGtT]}" unit="${1##*[0-9]}"
  n=$((10#$n))
  case "$unit" in
    k | K) echo $((n << 10)) ;; m | M) echo $((n << 20)) ;; g | G) echo $((n << 30)) ;;
    t | T) echo $((n << 40)) ;; *) echo "$n" ;;
  esac
}
machine_memory() { # bytes of memory this machine (or its container) has; empty when unknown
  local kb limit
  if [[ -r /proc/meminfo ]]; then
    kb="$(awk '/^MemTotal:/ {print $2; exit}' /proc/meminfo)"
    [[ "$kb" =~ ^[0-9]+$ ]] || return 0
    limit="$(cat /sys/fs/cgroup/memory.max 2>/dev/null || true)"
    if [[ "$limit" =~ ^[0-9]+$ && "$limit" -lt $((kb * 1024)) ]]; then echo "$limit"; else echo $((kb * 1024)); fi
  else
    sysctl -n hw.memsize 2>/dev/null || true
  fi
}
check_memory() { # option, size
  local b machine
  local digits="${2%[kKmMgGtT]}" most=18 # digits that cannot overflow 64 bits in the unit
  case "${2##*[0-9]}" in k | K) most=15 ;; m | M) most=12 ;; g | G) most=9 ;; t | T) most=6 ;; esac
  [[ "${#digits}" -le "$most" ]] || die "$1 $2 is more than any machine has; give a size such as 4g"
  b="$(bytes_of "$2")"
  # Spark reads a bare --executor-memory in MiB (spark.executor.memory), a bare --driver-memory in
  # bytes (the driver's -Xmx).
  [[ "$1" == --executor-memory && "$2" =~ ^[0-9]+$ ]] && b=$(($2 << 20))
  if [[ "$b" -lt "$min_heap" ]]; then
    local hint=""
    [[ "$1" == --driver-memory && "$2" =~ ^[0-9]+$ ]] && hint=" (a number without a unit is bytes: did you mean ${2}m?)"
    die "$1 $2 is below the 450m Spark needs at least (1.5 times the 300m it reserves)$hint; give $1 1g or more"
  fi
  if [[ "$1" == --driver-memory ]]; then
    machine="$(machine_memory)"
    if [[ -n "$machine" && "$b" -gt "$machine" ]]; then
      die "$1 $2 is more than this machine's memory ($((machine >> 20))m); give $1 at most $((machine >> 30))g"
    fi
  fi
}
run_class=""
run_jar=""
run_jars=""
while [[ $# -gt 0 ]]; do
  if [[ "$job" == run ]]; then
    case "$1" in
      --class)
        value_of "$1" $# "${2:-}"
        [[ -z "$run_class" ]] || die "--class is given twice; give it once"
        run_class="$2"; shift 2; continue ;;
      --jars)
        value_of "$1" $# "${2:-}"
        [[ -z "$run_jars" ]] || die "--jars is given twice; give the jars once, separated by commas"
        run_jars="$2"; shift 2; continue ;;
      -*) ;;
      *) run_jar="$1"; shift; job_args=("$@"); break ;;
    esac
  fi
  case "$1" in
    --master)
      value_of "$1" $# "${2:-}"
      [[ -z "$master" ]] || die "--master is given twice; give it once"
      master="$2"; shift 2 ;;
    --conf)
      value_of "$1" $# "${2:-}"
      [[ "$2" == ?*=* ]] || die "--conf needs key=value, got '$2'"
      spark_args+=(--conf "$2"); shift 2 ;;
    --driver-memory | --executor-memory)
      value_of "$1" $# "${2:-}"
      [[ "$2" =~ ^[0-9]+[kKmMgGtT]?$ ]] || die "$1 needs a size such as 4g or 512m, got '$2'"
      check_memory "$1" "$2"
      [[ "$1" == --driver-memory ]] && driver_memory="$2"
      spark_args+=("$1" "$2"); shift 2 ;;
    --executor-cores | --total-executor-cores)
      value_of "$1" $# "${2:-}"
      [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 needs a whole number of 1 or more, got '$2'"
      spark_args+=("$1" "$2"); shift 2 ;;
    --verbose) verbose=1; shift ;;
    *)
      [[ "$job" != run ]] ||
        die "run: unknown option '$1' before the application's jar; run takes --class, --jars and the spark options (see run --help)"
      job_args+=("$1"); shift ;;
  esac
done
if [[ "$job" == run ]]; then
  [[ -n "$run_jar" ]] ||
    die "run needs your application's jar: ./spark-submit.sh run --class MAIN APP.jar [args]"
  [[ -n "$run_class" ]] ||
    die "run needs --class MAIN, the class whose main method runs (e.g. --class example.RevenueJob)"
  [[ -f "$run_jar" && -r "$run_jar" ]] ||
    die "no readable jar '$run_jar': build your application first (mvn package), then give its jar"
  IFS=, read -r -a extra_jars <<<"$run_jars"
  for j in ${extra_jars[@]+"${extra_jars[@]}"}; do
    [[ -f "$j" && -r "$j" ]] || die "--jars: no readable jar '$j'"
  done
fi

# --- --master: the forms Spark takes, checked before a JVM starts ------------------------------
spark_jars() { # the Spark jars this run uses, one a line
  if [[ -n "${SPARK_HOME:-}" ]]; then
    ls "$SPARK_HOME"/jars 2>/dev/null || true
  elif [[ -f "$here/jobs/target/spark-classpath.txt" ]]; then
    tr ':' '\n' <"$here/jobs/target/spark-classpath.txt"
  fi
}
has_spark_jar() { # a jar name's start, e.g. spark-yarn_
  local cp
  cp="$(spark_jars)"
  [[ -z "$cp" ]] && return 0 # not built yet: Spark says it, once built
  grep -q "$1" <<<"$cp"
}
check_master() {
  local m="$1" n
  case "$m" in
    local | "local[*]") ;;
    local\[*)
      [[ "$m" =~ ^local\[(\*|[0-9]+)(,[0-9]+)?\]$ ]] ||
        die "--master '$m' is not local[N] or local[N,F]; use local[*] (a thread per core) or local[N] with N of 1 or more"
      n="${BASH_REMATCH[1]}"
      [[ "$n" == "*" || "$n" -ge 1 ]] ||
        die "--master '$m' gives 0 threads; use local[*] (a thread per core) or local[N] with N of 1 or more"
      [[ -z "${BASH_REMATCH[2]}" || "${BASH_REMATCH[2]#,}" -ge 1 ]] ||
        die "--master '$m' allows 0 task failures; use local[N,F] with F of 1 or more"
      ;;
    local-cluster\[*) ;;
    spark://?*) ;;
    yarn)
      [[ -n "${HADOOP_CONF_DIR:-}${YARN_CONF_DIR:-}" ]] ||
        die "--master yarn needs the cluster's configuration: set HADOOP_CONF_DIR (or YARN_CONF_DIR) to the folder that holds its yarn-site.xml"
      has_spark_jar spark-yarn_ ||
        die "--master yarn needs Spark's YARN support, which the Spark this runs lacks: set SPARK_HOME to a Spark 4.0 distribution built with YARN"
      ;;
    k8s://?*)
      has_spark_jar spark-kubernetes_ ||
        die "--master $m needs Spark's Kubernetes support, which the Spark this runs lacks: set SPARK_HOME to a Spark 4.0 distribution built with Kubernetes"
      ;;
    *)
      die "--master '$m' is not a master URL Spark knows; use local[*], local[N], spark://host:port, yarn or k8s://https://host:port"
      ;;
  esac
}
[[ -z "$master" ]] || check_master "$master"

# The run's log: every line Spark and the job log, with stack traces; a failure's line names it.
log_dir="${OVERLAP_LOG_DIR:-$here/logs}"
mkdir -p "$log_dir" 2>/dev/null || log_dir="${TMPDIR:-/tmp}"
log_file="$log_dir/overlap-$job-$(date +%Y%m%d-%H%M%S)-$$.log"
log_opts=("-Dlog4j2.configurationFile=file:$here/conf/log4j2.properties" "-Doverlap.log.file=$log_file")
# RMM's own lines (cuDF's pinned pool prints one for each allocation it refuses, which then comes
# from pageable memory) go to a file beside the run's log, not the terminal; RMM creates it only
# when it has a line to write.
export RMM_DEBUG_LOG_FILE="${RMM_DEBUG_LOG_FILE:-${log_file%.log}-rmm.log}"
[[ "$verbose" -eq 1 ]] && log_opts+=(-Doverlap.console.level=all -Doverlap.console.trace=full)
# The project folder, which no output may replace.
export OVERLAP_HOME="$here"

# --- the project's jars, built when missing ---------------------------------------------------
find_jobs_jar() {
  local j
  for j in "$here"/jobs/target/overlap-jobs-*.jar; do
    [[ -f "$j" ]] && { echo "$j"; return 0; }
  done
  return 0
}
# When this script's last build began: Maven rewrites a module's jar only when that module
# changed, so after an edit in executor/ or ml/ the jobs jar keeps its older time.
built_stamp="$here/jobs/target/overlap-built.stamp"
# A source or pom edited since the jars were built: the first one found, or nothing.
# OVERLAP_PREBUILT=1 skips the check, for jars built elsewhere and shipped with the sources
# (tools/gpu-jobs.sh on a machine without Maven).
changed_source() {
  local d since="$jobs_jar"
  [[ "${OVERLAP_PREBUILT:-}" == 1 ]] && return 0
  [[ -f "$built_stamp" && "$built_stamp" -nt "$jobs_jar" ]] && since="$built_stamp"
  for d in "$here/pom.xml" "$here/executor/pom.xml" "$here/ml/pom.xml" "$here/jobs/pom.xml" \
    "$here/executor/src/main" "$here/ml/src/main" "$here/jobs/src/main"; do
    [[ -e "$d" ]] || continue
    find "$d" -type f -newer "$since" -print -quit 2>/dev/null
  done | head -1
}
jobs_jar="$(find_jobs_jar)"
why="first run: building the project"
stale=""
if [[ -n "$jobs_jar" ]]; then
  stale="$(changed_source)"
  why="the build is incomplete: rebuilding"
  [[ -z "$stale" ]] || why="${stale#"$here"/} changed since the last build: rebuilding"
fi
if [[ -z "$jobs_jar" || -n "$stale" || ! -d "$here/jobs/target/lib" || ! -f "$here/jobs/target/spark-classpath.txt" ]]; then
  if ! command -v mvn >/dev/null 2>&1; then
    [[ -z "$stale" || -z "$jobs_jar" ]] &&
      die "the project is not built and Maven (mvn) is not installed: install Maven 3.8+ and run again"
    die "${stale#"$here"/} changed since the project was built, and Maven (mvn) is not installed to rebuild it: install Maven 3.8+, or undo the change"
  fi
  build_log="$log_dir/build-$(date +%Y%m%d-%H%M%S).log"
  echo "spark-submit.sh: $why (mvn -DskipTests package -pl jobs -am, a few minutes; log: $build_log)" >&2
  started=$SECONDS
  # Stamped before the build: a source edited while it runs is still newer afterwards.
  mkdir -p "$here/jobs/target" && touch "$built_stamp.new"
  # Maven's module lines as progress, with the time so far.
  # Only the jobs and what they are built from (not the recipe checks' module).
  if ! (cd "$here" && mvn -B -ntp -DskipTests package -pl jobs -am 2>&1) | tee "$build_log" |
    while IFS= read -r line; do
      case "$line" in
        "[INFO] Building "*" ["*) echo "  ${line#\[INFO\] } ($((SECONDS - started)) s)" >&2 ;;
      esac
    done || ! grep -q "BUILD SUCCESS" "$build_log"; then
    grep -E '^\[ERROR\]' "$build_log" | head -20 >&2
    die "the build failed (full log: $build_log)"
  fi
  echo "  built in $((SECONDS - started)) s" >&2
  mv -f "$built_stamp.new" "$built_stamp"
  jobs_jar="$(find_jobs_jar)"
fi
# The jobs' dependencies: the plugin (overlap-executor) and the feature encoder (overlap-ml) among
# them, shipped with a job's jar and with your application's.
ship=("$here"/jobs/target/lib/*.jar)
# Delta Lake's jars, only for a job that reads a Delta table (--format delta): built into
# jobs/target/delta, or, for jars built elsewhere, the Delta entries of the Spark class path.
reads_delta=0
if [[ "$job" == etl || "$job" == features ]]; then
  for ((i = 0; i + 1 < ${#job_args[@]}; i++)); do
    [[ "${job_args[i]}" == --format && "${job_args[i + 1]}" == delta ]] && reads_delta=1
  done
fi
if [[ "$reads_delta" -eq 1 ]]; then
  delta_jars=()
  for j in "$here"/jobs/target/delta/*.jar; do
    [[ -f "$j" ]] && delta_jars+=("$j")
  done
  if [[ ${#delta_jars[@]} -eq 0 ]]; then
    while IFS= read -r j; do
      delta_jars+=("$j")
    done < <(tr ':' '\n' <"$here/jobs/target/spark-classpath.txt" | grep -E '/delta-(spark_2\.13|storage)-[^/]*\.jar$')
  fi
  [[ ${#delta_jars[@]} -ge 2 ]] ||
    die "--format delta needs Delta Lake's jars (delta-spark_2.13 and delta-storage 4.0.0) in $here/jobs/target/delta: rebuild with mvn -DskipTests package"
  ship+=("${delta_jars[@]}")
fi
# The RAPIDS Accelerator's jar also goes on the driver's own class path: Spark loads the classes
# of spark.plugins when it starts, and the executors get it with --jars.
driver_cp=()
if [[ -n "${OVERLAP_RAPIDS_JAR:-}" ]]; then
  ship+=("$OVERLAP_RAPIDS_JAR")
  driver_cp=(--driver-class-path "$OVERLAP_RAPIDS_JAR")
else
  cudf_jars=("$here"/jobs/target/cudf/*.jar)
  [[ -f "${cudf_jars[0]}" ]] ||
    die "no cuDF jar in $here/jobs/target/cudf: rebuild with mvn -DskipTests package, or set OVERLAP_RAPIDS_JAR"
  ship+=("${cudf_jars[@]}")
fi
main_class=dev.overlap.jobs.Main
app=("$jobs_jar" "$job")
if [[ "$job" == run ]]; then
  # Your jar is Spark's primary resource; the plugin's jars and yours ride with it.
  main_class="$run_class"
  app=("$run_jar")
  ship+=(${extra_jars[@]+"${extra_jars[@]}"})
fi
jars="$(IFS=,; echo "${ship[*]}")"

common=(
  --class "$main_class"
  --properties-file "$here/conf/spark-defaults.conf"
  --jars "$jars"
  --conf "spark.driver.extraJavaOptions=${log_opts[*]}"
)
if [[ "$reads_delta" -eq 1 ]]; then
  # Delta's rules (deletion vectors among them) and catalog; a --conf of yours comes later and wins.
  common+=(--conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension
    --conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog)
fi
if [[ "$job" != run || ! -t 2 ]]; then
  # The jobs draw one progress line per long phase on the terminal; Spark's stage bars would
  # overwrite it. Your application keeps Spark's bars on a terminal, and none go to a log or a
  # pipe, where their carriage returns would share lines with your output. A --conf
  # spark.ui.showConsoleProgress=true of yours comes later and wins.
  common+=(--conf spark.ui.showConsoleProgress=false)
fi

if [[ -n "${SPARK_HOME:-}" ]]; then
  [[ -x "$SPARK_HOME/bin/spark-submit" ]] || die "SPARK_HOME=$SPARK_HOME has no bin/spark-submit"
  exec "$SPARK_HOME/bin/spark-submit" --master "${master:-local[*]}" "${common[@]}" \
    ${driver_cp[@]+"${driver_cp[@]}"} ${spark_args[@]+"${spark_args[@]}"} \
    "${app[@]}" ${job_args[@]+"${job_args[@]}"}
fi

# No Spark installation: the same submission with the Spark jars Maven resolved.
# The JVM options Spark's own launcher would add on Java 17, kept in one file.
# A read loop rather than mapfile, which the bash that macOS ships (3.2) lacks.
jvm_options=()
while IFS= read -r opt; do
  [[ -n "$opt" ]] && jvm_options+=("$opt")
done <"$here/conf/jvm-options.txt"
heap=()
[[ -n "$driver_memory" ]] && heap=("-Xmx$driver_memory")
# This JVM is the driver: the RAPIDS Accelerator's jar joins its class path here.
classpath="$(cat "$here/jobs/target/spark-classpath.txt")"
[[ -n "${OVERLAP_RAPIDS_JAR:-}" ]] && classpath="$classpath:$OVERLAP_RAPIDS_JAR"
# Spark's classes as this Java loaded them in a run at build time (a class-data archive, made by
# the build's training runs with OVERLAP_CDS_DUMP): the JVM maps them instead of loading them
# again, which takes a quarter off a short run. A heap of about 32 GB or more turns Java's
# compressed pointers off (it keeps them up to a little under 32 GB), and an archive maps only into
# a JVM like the one that made it: such a driver takes the archive made without them (made only on
# a machine with room for such a heap). An archive older than the jars, or one this Java cannot
# use, is left aside without a word; delete jobs/target/overlap-cds*.jsa to start without one. An
# archive of another size than the training run wrote (a copy cut short) is never mapped: Java
# would crash on it.
coops_max=$(((32 << 30) - (64 << 20)))
big_heap=0
[[ -n "$driver_memory" && "$(bytes_of "$driver_memory")" -gt "$coops_max" ]] && big_heap=1
archive="$here/jobs/target/overlap-cds.jsa"
nocoops=()
if [[ "${OVERLAP_CDS_DUMP:-}" == nocoops ]] || ((big_heap)); then
  archive="$here/jobs/target/overlap-cds-nocoops.jsa"
  [[ -n "${OVERLAP_CDS_DUMP:-}" ]] && nocoops=(-XX:-UseCompressedOops)
fi
cds=()
if [[ -n "${OVERLAP_CDS_DUMP:-}" ]]; then
  # Each training run writes its own file: two builds at once never share one half written.
  cds=(${nocoops[@]+"${nocoops[@]}"} -XX:ArchiveClassesAtExit="$archive.tmp.$$" -Xlog:cds=off,cds+dynamic=off)
elif [[ -f "$archive" && "$archive" -nt "$jobs_jar" && "$archive" -nt "$here/jobs/target/spark-classpath.txt" &&
  "$(wc -c <"$archive" | tr -d ' ')" == "$(cat "$archive.size" 2>/dev/null)" ]]; then
  cds=(-XX:SharedArchiveFile="$archive" -Xlog:cds=off,cds+dynamic=off)
fi
command=("$java_bin" ${heap[@]+"${heap[@]}"} "${jvm_options[@]}" ${cds[@]+"${cds[@]}"}
  "${log_opts[@]}"
  -cp "$classpath" org.apache.spark.deploy.SparkSubmit
  --master "${master:-local[*]}" "${common[@]}" ${spark_args[@]+"${spark_args[@]}"}
  "${app[@]}" ${job_args[@]+"${job_args[@]}"})
if [[ -n "${OVERLAP_CDS_DUMP:-}" ]]; then
  # The build's training run: the archive takes its place once complete. Without one, runs start
  # as they would anyway: a failed training run is one line, not a failed build.
  rm -f "$archive" "$archive.size"
  machine="$(machine_memory)"
  if [[ "$OVERLAP_CDS_DUMP" == nocoops && -n "$machine" && "$machine" -le "$coops_max" ]]; then
    echo "spark-submit.sh: no class-data archive for a heap of 32 GB or more: this machine has less memory"
    exit 0
  fi
  if ! "${command[@]}"; then
    echo "spark-submit.sh: no class-data archive made: its training run failed (log: $log_file)" >&2
  elif [[ ! -s "$archive.tmp.$$" ]]; then
    echo "spark-submit.sh: no class-data archive made: this Java wrote none (a runtime without a base archive needs 'java -Xshare:dump' first)" >&2
  else
    wc -c <"$archive.tmp.$$" | tr -d ' ' >"$archive.size.tmp.$$"
    mv "$archive.tmp.$$" "$archive"
    mv "$archive.size.tmp.$$" "$archive.size"
  fi
  rm -f "$archive.tmp.$$" "$archive.size.tmp.$$"
  exit 0
fi
exec "${command[@]}"
