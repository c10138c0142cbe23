#!/usr/bin/env bash
# The user's entry point: runs one of Overlap's jobs with the plugin enabled.
#
#   ./spark-submit.sh <job> [job options] [--master URL] [--conf key=value ...]
#
# Jobs: generate, etl, features (./spark-submit.sh --help for their options).
# With SPARK_HOME set, submits through $SPARK_HOME/bin/spark-submit; without it, through the
# Spark jars Maven resolved, on master local[*] unless --master says otherwise. Builds the project
# first when its jars are missing. OVERLAP_RAPIDS_JAR=/path/rapids-4-spark_2.13-26.08.1-cuda13.jar
# ships the RAPIDS Accelerator's jar instead of cuDF's (it carries the same classes).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() {
  echo "spark-submit.sh: $*" >&2
  exit 2
}

usage() {
  cat <<'USAGE'
usage: ./spark-submit.sh <job> [job options] [spark options]

jobs:
  generate --scale SF [--output DIR] [--overwrite]   TPC-H lineitem and orders as Parquet
  etl      [--input DIR] [--output DIR] [--overwrite] TPC-H Q1 and Q6 over lineitem
  features [--input DIR] [--output DIR] [--overwrite] [--vocabulary N]

  Without --input, etl and features use TPC-H SF 0.01, generated into ./data/ on first use.
  Without --output, results go to ./out/<job>, replaced on each run.

spark options:
  --master URL          default local[*]
  --conf key=value      any Spark or spark.overlap.* setting (repeatable)
  --driver-memory SIZE, --executor-memory SIZE, --executor-cores N, --total-executor-cores N
USAGE
}

[[ $# -gt 0 ]] || { usage >&2; exit 2; }
case "$1" in
  -h | --help) usage; exit 0 ;;
  generate | etl | features) job="$1"; shift ;;
  *) die "unknown job '$1'; jobs: generate, etl, features (see --help)" ;;
esac

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

# --- arguments: Spark's own, and the job's ----------------------------------------------------
master=""
spark_args=()
job_args=()
input=""
output=""
overwrite=0
driver_memory=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --master) [[ $# -ge 2 ]] || die "--master needs a value"; master="$2"; shift 2 ;;
    --conf) [[ $# -ge 2 && "$2" == *=* ]] || die "--conf needs key=value"; spark_args+=(--conf "$2"); shift 2 ;;
    --driver-memory) [[ $# -ge 2 ]] || die "$1 needs a value"; driver_memory="$2"; spark_args+=("$1" "$2"); shift 2 ;;
    --executor-memory | --executor-cores | --total-executor-cores)
      [[ $# -ge 2 ]] || die "$1 needs a value"; spark_args+=("$1" "$2"); shift 2 ;;
    --input) [[ $# -ge 2 ]] || die "--input needs a path"; input="$2"; job_args+=("$1" "$2"); shift 2 ;;
    --output) [[ $# -ge 2 ]] || die "--output needs a path"; output="$2"; job_args+=("$1" "$2"); shift 2 ;;
    --overwrite) overwrite=1; job_args+=("$1"); shift ;;
    --scale | --vocabulary) [[ $# -ge 2 ]] || die "$1 needs a value"; job_args+=("$1" "$2"); shift 2 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

is_local_path() { [[ "$1" != *://* && "$1" != dbfs:* ]]; }
if [[ -n "$input" ]] && is_local_path "$input" && [[ ! -e "$input" ]]; then
  die "input path '$input' does not exist"
fi
if [[ -n "$output" ]] && is_local_path "$output" && [[ -e "$output" && "$overwrite" -eq 0 ]]; then
  die "output path '$output' exists; pass --overwrite to replace it"
fi

# --- the project's jars, built when missing ---------------------------------------------------
find_jobs_jar() {
  local j
  for j in "$here"/jobs/target/overlap-jobs-*.jar; do
    [[ -f "$j" ]] && { echo "$j"; return 0; }
  done
  return 0
}
jobs_jar="$(find_jobs_jar)"
if [[ -z "$jobs_jar" || ! -d "$here/jobs/target/lib" || ! -f "$here/jobs/target/spark-classpath.txt" ]]; then
  command -v mvn >/dev/null 2>&1 ||
    die "the project is not built and Maven (mvn) is not installed: install Maven 3.8+ and run again"
  echo "spark-submit.sh: building the project (mvn -DskipTests package) ..." >&2
  (cd "$here" && mvn -B -q -DskipTests package) >&2 || die "the build failed (see above)"
  jobs_jar="$(find_jobs_jar)"
fi
ship=("$here"/jobs/target/lib/*.jar)
if [[ -n "${OVERLAP_RAPIDS_JAR:-}" ]]; then
  [[ -f "$OVERLAP_RAPIDS_JAR" ]] || die "OVERLAP_RAPIDS_JAR=$OVERLAP_RAPIDS_JAR is not a file"
  ship+=("$OVERLAP_RAPIDS_JAR")
else
  ship+=("$here"/jobs/target/cudf/*.jar)
fi
jars="$(IFS=,; echo "${ship[*]}")"

common=(
  --class dev.overlap.jobs.Main
  --properties-file "$here/conf/spark-defaults.conf"
  --jars "$jars"
  --conf "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=file:$here/conf/log4j2.properties"
)

if [[ -n "${SPARK_HOME:-}" ]]; then
  [[ -x "$SPARK_HOME/bin/spark-submit" ]] || die "SPARK_HOME=$SPARK_HOME has no bin/spark-submit"
  exec "$SPARK_HOME/bin/spark-submit" --master "${master:-local[*]}" "${common[@]}" \
    ${spark_args[@]+"${spark_args[@]}"} "$jobs_jar" "$job" ${job_args[@]+"${job_args[@]}"}
fi

# No Spark installation: the same submission with the Spark jars Maven resolved.
# The JVM options Spark's own launcher would add on Java 17, kept in one file.
mapfile -t jvm_options <"$here/conf/jvm-options.txt"
heap=()
[[ -n "$driver_memory" ]] && heap=("-Xmx$driver_memory")
exec "$java_bin" ${heap[@]+"${heap[@]}"} "${jvm_options[@]}" \
  "-Dlog4j2.configurationFile=file:$here/conf/log4j2.properties" \
  -cp "$(cat "$here/jobs/target/spark-classpath.txt")" org.apache.spark.deploy.SparkSubmit \
  --master "${master:-local[*]}" "${common[@]}" ${spark_args[@]+"${spark_args[@]}"} \
  "$jobs_jar" "$job" ${job_args[@]+"${job_args[@]}"}
