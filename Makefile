# Convenience front end over CMake. `make test` is the README's test command.
PREFIX ?= /usr/local
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc)
PYTEST = .venv/bin/python -m pytest
# Under sudo, vmpirun would run ranks as the invoking user (--user), who
# cannot reach the root-owned build and test directories: jobs started
# from here run as whoever runs make.
unexport SUDO_UID SUDO_GID SUDO_USER

.PHONY: all configure install test test-c test-py test-asan test-tsan main clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

configure:
	@test -f $(BUILD)/build.ninja || cmake -S . -B $(BUILD) -G Ninja >/dev/null

# VENV=no leaves out the Python venv (PREFIX/lib/vmpi/venv) that vmpi study's
# figures need; everything else works without it.
VENV ?= yes
install: all
	cmake --install $(BUILD) --prefix $(PREFIX)
	@if [ "$(VENV)" != no ]; then sh tools/install_venv.sh "$(abspath $(PREFIX))"; fi

test: all
	python3 tools/layer_check.py
	ctest --test-dir $(BUILD) --output-on-failure -j 1
	VMPI_BUILD=$(abspath $(BUILD)) $(PYTEST) -q tests/py

# The C tests once more under AddressSanitizer and UndefinedBehaviorSanitizer
# (the collective matrix's largest placements only run in the plain pass).
# This build has no link-time optimization, so the layer check also reads
# its objects' symbols: no call goes up a layer.
test-asan:
	@test -f $(ASAN_BUILD)/build.ninja || \
	  cmake -S . -B $(ASAN_BUILD) -G Ninja -DVMPI_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	python3 tools/layer_check.py --objects $(ASAN_BUILD)/CMakeFiles/vmpi_obj.dir
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j 1 -E 'abi_mpich|netpipe|t_coll_ref\.(np8|v3|h2v2)'

# The tests whose ranks run several threads (MPI_THREAD_MULTIPLE, the
# progress helper) under ThreadSanitizer; any report fails the test.
# t_rma_progress is left out: its target reads window memory outside MPI
# while the helper writes it, a race by design.
test-tsan:
	@test -f $(TSAN_BUILD)/build.ninja || \
	  cmake -S . -B $(TSAN_BUILD) -G Ninja -DVMPI_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	TSAN_OPTIONS=halt_on_error=1:abort_on_error=1:exitcode=66 \
	  ctest --test-dir $(TSAN_BUILD) --output-on-failure -j 1 -R 't_thread_|t_p2p_bsend|t_rma_pairs|t_greq|u_htab'

# The main job: the default study (vmpi next to Debian's MPICH and Open MPI
# in one VM, two VMs and two hosts), its report in $(STUDY)/report.html.
STUDY ?= $(BUILD)/study
main: all
	PYTHONPATH=python .venv/bin/python -m vmpi study --out $(STUDY) --force --build $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
