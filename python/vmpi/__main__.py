"""``python3 -m vmpi run ...`` runs the launcher (same as ``vmpirun ...``)."""

import sys

USAGE = """\
usage: python3 -m vmpi run [vmpirun options] PROGRAM [ARGS...]
       python3 -m vmpi cleanup [-v]
"""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("run", "vmpirun", "mpiexec"):
        from .launcher import main as run_main
        return run_main(argv[1:])
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
