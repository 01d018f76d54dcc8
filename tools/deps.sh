#!/bin/sh
# Installs what building, testing and benchmarking vmpi need on Debian 12,
# and only what is missing, so it is quick on a prepared machine.
# slurm-wlm and munge: the one-machine Slurm of tests/py/test_slurm.py (its
# pmi2 and pmix plugins); libpmix-dev: pmix_common.h, which
# tests/py/test_pmix.py compares with vmpi's own PMIx declarations.
set -e
cd "$(dirname "$0")/.."
pkgs="build-essential g++ gfortran cmake ninja-build pkg-config python3 python3-venv iproute2 procps
      mpich libmpich-dev openmpi-bin libopenmpi-dev netpipe-mpich2 libhdf5-mpich-dev libfabric-dev libfabric-bin
      qemu-system-x86
      slurm-wlm munge libpmix-dev"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# Python packages for the tests and the study's figures live in a venv.
if [ ! -x .venv/bin/pytest ] || ! .venv/bin/python -c "import matplotlib" 2>/dev/null; then
    echo "deps: setting up .venv (pytest, matplotlib)"
    [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check pytest matplotlib
fi
