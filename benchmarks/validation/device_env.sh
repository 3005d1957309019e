# Sourced by the device scripts of this folder, from the repository root on the GPU machine: the
# carried site-packages (TileLang and its dependencies) and pipelint laid out as setup.py maps it,
# on PYTHONPATH; `out` is where the results go ($OUT, which the device tool brings back).
mkdir -p /tmp/site
[ -d /tmp/site/tilelang ] || tar -C /tmp/site -xJf .carry/site312.tar.xz || exit 2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 PIPELINT_CACHE_DIR=/tmp/pipelint-cache
rm -rf /tmp/plpkg && mkdir -p /tmp/plpkg/pipelint          # the package as setup.py maps it
cp -r analyzer/. /tmp/plpkg/pipelint/
ln -s "$PWD/plugins" /tmp/plpkg/pipelint/plugins
ln -s "$PWD/grammars" /tmp/plpkg/pipelint/grammars
ln -s "$PWD/docs/rules" /tmp/plpkg/pipelint/rule_docs
cp pyproject.toml /tmp/plpkg/
export PYTHONPATH=/tmp/plpkg:$PYTHONPATH
out=${OUT:-/tmp/out}; mkdir -p "$out"
