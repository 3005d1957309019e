#!/usr/bin/env bash
# forced_schedule.py on the GPU machine, from the repository root (carry [".carry"]):
#   benchmarks/validation/forced_schedule.sh run PLAN_DIR OUT_DIR [--jobs 16 --timeout 90]
# Unpacks the offline bundle (.carry/site312.tar.xz: TileLang, its headers, lark) into /tmp/site,
# and, where `pipelint` is not installed, maps the repository's folders into a `pipelint` package
# in /tmp/plpkg as setup.py maps them (as run_raw.sh does).
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
  cp pyproject.toml /tmp/plpkg/            # the plugins' entry points (pluginhost.builtin_plugins)
  export PYTHONPATH=/tmp/plpkg:$PYTHONPATH
  $PY -c "import pipelint.cuda.parser" || { echo "forced_schedule.sh: cannot import pipelint's parser" >&2; exit 2; }
fi
export PIPELINT_CACHE_DIR=${PIPELINT_CACHE_DIR:-/tmp/pipelint-cache} PYTHONUNBUFFERED=1
exec $PY benchmarks/validation/forced_schedule.py "$@"
