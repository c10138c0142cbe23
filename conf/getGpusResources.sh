#!/usr/bin/env bash
# GPU discovery script for Spark (spark.executor.resource.gpu.discoveryScript,
# spark.worker.resource.gpu.discoveryScript): prints the GPUs nvidia-smi sees as
#   {"name": "gpu", "addresses": ["0","1"]}
set -euo pipefail
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "getGpusResources.sh: nvidia-smi not found; is the NVIDIA driver installed?" >&2
  exit 1
fi
addresses="$(nvidia-smi --query-gpu=index --format=csv,noheader | sed -e 's/[[:space:]]//g' -e '/^$/d' \
  | sed -e 's/.*/"&"/' | paste -sd, -)"
echo "{\"name\": \"gpu\", \"addresses\": [${addresses}]}"
