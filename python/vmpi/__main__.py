"""The ``vmpi`` command: ``vmpi run ...`` is the launcher (same as
``vmpirun ...``), ``vmpi study ...`` the measurement suite."""

import sys

USAGE = """\
usage: vmpi run [vmpirun options] PROGRAM [ARGS...]
       vmpi cleanup [-v]
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


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("run", "vmpirun", "mpiexec"):
        from .launcher import main as run_main
        return run_main(argv[1:])
    if argv and argv[0] == "study":
        from .study import main as study_main
        return study_main(argv[1:])
    if argv and argv[0] == "vm":
        from .guests import vm_main
        return vm_main(argv[1:])
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
