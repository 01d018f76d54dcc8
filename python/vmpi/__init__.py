"""vmpi: an MPI library for virtualized clusters - Python side.

This package holds the ``vmpirun`` launcher (:mod:`vmpi.launcher`) with its
PMI-1 server (:mod:`vmpi.pmi`) and shared-memory bookkeeping
(:mod:`vmpi.shm`).
"""

__version__ = "0.1.0"
