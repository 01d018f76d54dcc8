"""What a spawn request (PMI spawn, MPI_Comm_spawn) means, the same for
every vmpirun mode: :mod:`vmpi.launcher` starts the new job's processes
itself, :mod:`vmpi.guests` has the init of a QEMU guest start them.

:func:`plan` checks every command of a request before anything starts (its
working directory, its program, its places) and :func:`server` makes the
new job's PMI service: its own key-value space holding the spawner's
preput pairs (and the trust domain's secret, :func:`domain_preput`), the
command's index as each rank's appnum, its ranks grouped by VM.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

from .options import this_machine
from .placement import spawn_vms
from . import pmi
from . import runas

__all__ = ["Command", "domain_preput", "find_program", "plan", "server", "spawned_env"]


@dataclass
class Command:
    """One command of a spawn, checked: where its program and working
    directory are, and the VM number of each of its processes."""

    block: pmi.SpawnBlock
    path: str
    wdir: str
    places: list[int]


def domain_preput(opts) -> dict[str, str]:
    """The pairs every job's key-value space starts with: the secret of the
    trust domain vmpirun chooses (VMPI_DOMAIN unless the user named one),
    which keys the integrity checks of messages between its jobs
    (channel/pair/sum.c) and reaches them through the KVS only, never the
    environment or the region."""
    if "VMPI_DOMAIN" in os.environ or "VMPI_DOMAIN" in dict(opts.env):
        return {}
    return {"vmpi-domainsecret": secrets.token_hex(8)}


def find_program(execname: str, path: str | None, wdir: str, env_path: str
                 ) -> tuple[str | None, str]:
    """Where execname is for a spawn (Hydra's way: a name with a slash from
    the working directory, else in the info "path" directories, then
    env_path, the ranks' PATH); or None and why not."""
    if "/" in execname:
        cands = [os.path.join(wdir, execname)]
        where = f"in {wdir}" if not execname.startswith("/") else ""
    else:
        dirs = (path.split(":") if path else []) + env_path.split(os.pathsep)
        cands = [os.path.join(wdir, d or ".", execname) for d in dirs]
        where = (f"in the info path {path} nor PATH" if path else "in PATH")
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c, ""
    found = next((c for c in cands if os.path.exists(c)), None)
    if found:
        return None, f"{execname}: {found} is not an executable file"
    return None, f"{execname}: program not found {where}".rstrip()


def plan(ev: pmi.Spawn, *, base_dir: str, env_path: str, home: int, names: list[str],
         user: runas.User | None = None) -> tuple[list[Command], str]:
    """The commands of spawn request ev, checked: ([Command], "") or ([], why
    not). Working directories are taken from base_dir, programs found with
    env_path; the processes go to VM ``home`` (the spawner's) unless the
    info ``host`` names places of ``names`` (VM number = index)."""
    if sum(b.nprocs for b in ev.blocks) < 1:
        return [], "a spawn of no processes"
    here = this_machine()
    commands = []
    for b in ev.blocks:
        info = dict(b.info)
        wdir = os.path.join(base_dir, info.get("wdir", ""))
        if not os.path.isdir(wdir):
            return [], f"{b.execname}: the working directory {wdir} (info wdir) is not a directory"
        why = user and runas.cannot_enter(user, wdir)
        if why:
            return [], (f"{b.execname}: user {user.name} cannot enter the working "
                        f"directory {wdir}: {why}")
        path, err = find_program(b.execname, info.get("path"), wdir, env_path)
        if path is None:
            return [], err
        where, err = spawn_vms(info.get("host") or info.get("hosts"), b.nprocs, home, names, here)
        if err:
            return [], err
        commands.append(Command(b, path, wdir, where))
    return commands, ""


def server(commands: list[Command], kvsname: str, *, universe: int, names: dict[str, str],
           preput: dict[str, str]) -> pmi.PMIServer:
    """The PMI service of the job of ``commands``: ranks numbered across the
    commands in order, each command's index its ranks' appnum, the job's
    VMs numbered as they come as its nodes."""
    appnum = [i for i, c in enumerate(commands) for _ in c.places]
    node: dict[int, int] = {}
    return pmi.PMIServer(
        len(appnum), kvsname, appnum=appnum, universe_size=universe, names=names,
        preput=preput, spawn=True,
        node_of=[node.setdefault(vm, len(node)) for c in commands for vm in c.places])


def spawned_env(env: dict[str, str], region: bool) -> None:
    """What a spawned job's process gets beside the environment of a rank
    of the first job, once its own job id and PMI variables are in env."""
    env["PMI_SPAWNED"] = "1"    # MPICH's (and Hydra's) sign of a spawned job
    if region:
        # A spawned job's area goes into the host region beside its
        # parent's, whose default share is half the region: it takes the
        # least heap per rank unless the user chose one.
        env.setdefault("VMPI_IVSHMEM_HEAP", str(16 << 20))
