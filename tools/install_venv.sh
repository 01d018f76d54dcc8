#!/bin/sh
# The Python side of an installed vmpi (`make install` runs this): a venv in
# PREFIX/lib/vmpi/venv with the packages pyproject.toml declares for the
# tools (the study's figures need matplotlib); PREFIX/bin/vmpi runs in it.
# Usage: tools/install_venv.sh PREFIX
set -e
[ $# -eq 1 ] || { echo "usage: tools/install_venv.sh PREFIX" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$1/lib/vmpi/venv
deps=$(python3 - "$root/pyproject.toml" <<'PY'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    p = tomllib.load(f)["project"]
print(" ".join(p["dependencies"] + p["optional-dependencies"]["study"]))
PY
)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
[ -z "$deps" ] && exit 0
if ! "$venv/bin/pip" install -q --disable-pip-version-check $deps; then
    echo "make install: pip could not install $deps into $venv (no package index?);" \
         "install them there by hand, or use VENV=no to install without the venv" >&2
    exit 1
fi
echo "make install: $venv has $deps; $1/bin/vmpi runs in it"
