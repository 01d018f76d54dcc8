"""Rank placement, the same for every vmpirun mode.

Ranks go to hosts in blocks: host h gets ranks ``h*q + min(h, N%H)`` on,
q+1 of them for the first N%H hosts and q = N//H for the others.  Each
host's block is split among its VMs (emulated ones with ``--vms``, QEMU
guests with ``--vm-guests``) the same way.  Placements are lists of start
indices: the first rank of each host (or VM), then the number of ranks.

A spawned job's processes (:func:`spawn_vms`) go where the spawn's info
``host`` says, else where the rank that spawned them is.
"""

from __future__ import annotations

from . import vms

__all__ = ["host_starts", "vm_starts", "place_names", "spawn_vms"]


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


def place_names(nhosts: int, nvms: int, emulate_vms: bool) -> list[str]:
    """The names of a job's places, by VM number (host * nvms + VM of the
    host): ``h<i>-vm<j>`` with emulated VMs, else ``h<i>`` (a host is then
    one VM)."""
    if emulate_vms:
        return [vms.vm_name(h, j) for h in range(nhosts) for j in range(nvms)]
    return [f"h{h}" for h in range(nhosts)]


def spawn_vms(hosts: str | None, nprocs: int, home: int, names: list[str],
              here: set[str]) -> tuple[list[int], str]:
    """The VM number of each of nprocs spawned processes: home (the
    spawner's) without ``hosts``, else the places that comma-separated list
    names, in blocks like ranks among hosts, a name of this machine (in
    ``here``) meaning home; or ([], why not)."""
    chosen = []
    for name in filter(None, (h.strip() for h in (hosts or "").split(","))):
        if name in names:
            chosen.append(names.index(name))
        elif name in here:
            chosen.append(home)
        else:
            known = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            kind = "VMs" if names and "-" in names[0] else "hosts"
            return [], (f"host {name} (info host) is not this machine"
                        + (f" nor one of its {kind} ({known})" if names else ""))
    if not chosen:
        return [home] * nprocs, ""
    starts = host_starts(nprocs, len(chosen))
    return [chosen[k] for k in range(len(chosen)) for _ in range(starts[k], starts[k + 1])], ""
