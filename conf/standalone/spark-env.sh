# shellcheck shell=bash
# Standalone GPU node: $SPARK_HOME/conf/spark-env.sh on every worker.
# Each worker advertises its GPUs; the discovery script ships with Overlap.
SPARK_WORKER_OPTS="-Dspark.worker.resource.gpu.amount=${OVERLAP_WORKER_GPUS:-1} \
  -Dspark.worker.resource.gpu.discoveryScript=/opt/overlap/conf/getGpusResources.sh"
export SPARK_WORKER_OPTS
