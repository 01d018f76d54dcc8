"""Rank placement, the same for every vmpirun mode.

Ranks go to hosts in blocks: host h gets ranks ``h*q + min(h, N%H)`` on,
q+1 of them for the first N%H hosts and q = N//H for the others.  Each
host's block is split among its VMs (emulated ones with ``--vms``, QEMU
guests with ``--vm-guests``) the same way.  Placements are lists of start
indices: the first rank of each host (or VM), then the number of ranks.
"""

from __future__ import annotations

__all__ = ["host_starts", "vm_starts"]


def host_starts(nranks: int, nhosts: int) -> list[int]:
    """First rank of each host, then nranks: blocks, the first nranks % nhosts
    hosts one rank larger than the others."""
    q, extra = divmod(nranks, nhosts)
    return [h * q + min(h, extra) for h in range(nhosts + 1)]


def vm_starts(host_start: list[int], nvms: int) -> list[int]:
    """First rank of each VM (VM j of host h is number h*nvms + j), then the
    number of ranks: each host's block split like ranks among hosts."""
    starts = []
    for h in range(len(host_start) - 1):
        first = host_start[h]
        starts += [first + s for s in host_starts(host_start[h + 1] - first, nvms)[:-1]]
    return starts + [host_start[-1]]
