"""The ``vmpi`` command: ``vmpi run ...`` is the launcher (same as
``vmpirun ...``), ``vmpi study ...`` the measurement suite, ``vmpi vm ...``
the real-VM tools (:mod:`vmpi.guests` runs the guests)."""

import os
import shutil
import sys

USAGE = """\
usage: vmpi run [vmpirun options] PROGRAM [ARGS...]
       vmpi cleanup [-v]
       vmpi info [--raw]               the build, channels, libfabric providers
                                        and the MPI_T variables (docs/MPI_T.md)
       vmpi study [options]            (vmpi study --help)
       vmpi study compare OLD NEW
       vmpi study report DIR
       vmpi vm image [--refresh]        the real-VM guest kernel (cached)
       vmpi vm run [vmpirun options] PROGRAM [ARGS...]
                                        vmpirun in QEMU guests (--vm-guests,
                                        default 1 per host)
       vmpi vm artefacts --out DIR [--job NAME] [--size SIZE] [--vf PCI]
                                        libvirt, QEMU and OpenStack snippets
"""


VM_USAGE = """\
usage: vmpi vm image [--refresh]
       vmpi vm run [vmpirun options] PROGRAM [ARGS...]
       vmpi vm artefacts --out DIR [--job NAME] [--size SIZE] [--vf PCI]

image      fetch (once; --refresh: again) the Debian kernel the guests boot,
           unpack it into the cache and say what the guests are made of
run        vmpirun with the ranks in QEMU guests: --vm-guests N per host
           (default 1), --hosts H, --ivshmem-size SIZE (default 256M)
artefacts  write the libvirt, QEMU and OpenStack snippets that give a cloud's
           VMs one shared ivshmem device per job (docs/CLOUD.md)
"""


def vm_main(argv: list[str]) -> int:
    """``vmpi vm ...``."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(VM_USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        from .launcher import main as run_main
        if "--vm-guests" not in rest and not any(a.startswith("--vm-guests=") for a in rest):
            rest = ["--vm-guests", "1", *rest]
        return run_main(rest)
    if cmd == "artefacts":
        from . import cloud
        return cloud.main(rest)
    if cmd == "image":
        if rest not in ([], ["--refresh"]):
            sys.stderr.write(f"vmpi vm image: unknown argument {rest[0]!r}\n{VM_USAGE}")
            return 2
        from . import guest_image
        try:
            k = guest_image.kernel(refresh=bool(rest), log=lambda s: print(f"vmpi vm: {s}"))
            init = guest_image.find_init()
        except guest_image.ImageError as exc:
            sys.stderr.write(f"vmpi vm: {exc}\n")
            return 1
        qemu = (shutil.which("qemu-system-x86_64")
                or "not installed (apt-get install qemu-system-x86)")
        print(f"kernel   {k.release}: {k.vmlinux}")
        print(f"modules  {' '.join(os.path.basename(m) for m in k.modules)}")
        print(f"init     {init}")
        print(f"qemu     {qemu}")
        return 0
    sys.stderr.write(f"vmpi vm: unknown command {cmd!r}\n{VM_USAGE}")
    return 2


CLEANUP_USAGE = """\
usage: vmpi cleanup [-v]

remove the /dev/shm/vmpi-* files, network namespaces and VMs of vmpi jobs
that are gone (a job that crashed or was killed); -v says what is removed
or kept
"""


def _version_asked(argv: list[str]) -> bool:
    """`vmpi --version`, `vmpi SUB --version` (`vmpi study compare|report
    --version` too); never an argument of a program that vmpi starts."""
    if argv[:1] == ["--version"]:
        return True
    if argv[:1] == ["study"]:
        return "--version" in argv[1:3]
    return argv[:1] in (["info"], ["vm"], ["cleanup"]) and argv[1:2] == ["--version"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if _version_asked(argv):
        from .options import version
        sys.stdout.write(f"vmpi {version()}\n")
        return 0
    if argv[:1] == ["cleanup"] and argv[1:2] in (["-h"], ["--help"]):
        sys.stdout.write(CLEANUP_USAGE)
        return 0
    if argv and argv[0] in ("run", "vmpirun", "mpiexec"):
        from .launcher import main as run_main
        return run_main(argv[1:])
    if argv and argv[0] == "study":
        from .study import main as study_main
        return study_main(argv[1:])
    if argv and argv[0] == "vm":
        return vm_main(argv[1:])
    if argv and argv[0] == "info":
        from .info import main as info_main
        return info_main(argv[1:])
    if argv and argv[0] == "cleanup":
        from .launcher import main as run_main
        return run_main(["--cleanup"] + argv[1:])
    if argv and argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main())
