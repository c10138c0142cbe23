#!/usr/bin/env bash
# Databricks cluster init script: puts the Overlap jars on the classpath before the JVM starts
# (cluster libraries load too late for spark.plugins). Keep this script and the jars in a Unity
# Catalog volume and point the cluster's init script at this file.
#
#   OVERLAP_JARS  folder holding overlap-executor-*.jar, overlap-ml-*.jar for the feature encoder
#                 (optional), and, without the RAPIDS Accelerator, cudf-26.08.1-cuda13.jar;
#                 default /Volumes/main/default/overlap
set -euo pipefail
src="${OVERLAP_JARS:-/Volumes/main/default/overlap}"
shopt -s nullglob
jars=("$src"/overlap-executor-*.jar "$src"/overlap-ml-*.jar "$src"/cudf-*.jar)
if [[ ${#jars[@]} -eq 0 ]]; then
  echo "init-overlap.sh: no Overlap jars in $src" >&2
  exit 1
fi
for j in "${jars[@]}"; do
  cp "$j" /databricks/jars/
done
echo "init-overlap.sh: copied ${#jars[@]} jar(s) from $src to /databricks/jars/"
