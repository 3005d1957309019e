#!/usr/bin/env bash
# The raw-launch runner on the GPU machine, from the repository root:
#   benchmarks/validation/run_raw.sh MANIFEST.json OUT_DIR [run_raw.py options: --jobs 8 --timeout 60 --only ID]
# Unpacks the offline bundle (.carry/site312.tar.xz: TileLang's headers, lark) into /tmp/site unless
# it is there, and, where `pipelint` is not installed, maps the repository's folders into a
# `pipelint` package in /tmp/plpkg as setup.py maps them (analyzer/ -> pipelint, plugins/ ->
# pipelint.plugins, grammars/ -> pipelint.grammars): raw_launch.py uses pipelint's CUDA parser.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -d /tmp/site/tilelang ] && [ -f .carry/site312.tar.xz ]; then
  mkdir -p /tmp/site && tar -C /tmp/site -xJf .carry/site312.tar.xz
fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python3}
if ! $PY -c "import pipelint.cuda.parser" 2>/dev/null; then
  rm -rf /tmp/plpkg && mkdir -p /tmp/plpkg/pipelint
  cp -r analyzer/. /tmp/plpkg/pipelint/
  ln -s "$PWD/plugins" /tmp/plpkg/pipelint/plugins
  ln -s "$PWD/grammars" /tmp/plpkg/pipelint/grammars
  ln -s "$PWD/docs/rules" /tmp/plpkg/pipelint/rule_docs
  export PYTHONPATH=/tmp/plpkg:$PYTHONPATH
  $PY -c "import pipelint.cuda.parser" || { echo "run_raw.sh: cannot import pipelint's parser" >&2; exit 2; }
fi
export PIPELINT_CACHE_DIR=${PIPELINT_CACHE_DIR:-/tmp/pipelint-cache} PYTHONUNBUFFERED=1
exec $PY benchmarks/validation/run_raw.py "$@"
