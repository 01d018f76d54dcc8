"""Whose processes the ranks are: ``vmpirun --user``, or the user who ran
vmpirun through sudo.

Emulated VMs and hosts need root (namespaces, mounts), but the user's
program does not: once a rank's child has joined its namespaces and given
up the capabilities that would undo them (:func:`vmpi.vms.confine`), it
takes the uid, primary gid and supplementary groups of the chosen user
(:func:`become`), so root's file permissions reach neither the machine's
``/dev/shm`` nor another job's region.  Which user (:func:`ranks_user`):

* ``--user NAME|UID``: that user (``--user root`` keeps root);
* else, when vmpirun runs as root under sudo (``SUDO_UID`` set): the user
  who ran sudo;
* else: vmpirun's own user, as before (plain root stays root).

A vmpirun that is not root can only name itself.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass

__all__ = ["User", "lookup", "ranks_user", "become", "env_of", "cannot_enter"]


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int                    # primary group
    groups: tuple[int, ...]     # supplementary groups (initgroups' list)
    home: str


def _user(pw: pwd.struct_passwd) -> User:
    return User(pw.pw_name, pw.pw_uid, pw.pw_gid,
                tuple(os.getgrouplist(pw.pw_name, pw.pw_gid)), pw.pw_dir)


def lookup(text: str) -> User:
    """The user named (or numbered) ``text``; ValueError if there is none."""
    try:
        pw = pwd.getpwuid(int(text)) if text.isdigit() else pwd.getpwnam(text)
    except (KeyError, OverflowError, ValueError):
        raise ValueError(text) from None
    return _user(pw)


def ranks_user(chosen: User | None, environ=os.environ) -> User | None:
    """The user the ranks run as (see the module's text); None: vmpirun's own."""
    euid = os.geteuid()
    if chosen is not None:
        return chosen if chosen.uid != euid else None
    sudo = environ.get("SUDO_UID", "")
    if euid != 0 or not sudo.isdigit() or int(sudo) == 0:
        return None
    try:
        return _user(pwd.getpwuid(int(sudo)))
    except (KeyError, OverflowError):
        return None             # sudo from a user that is gone: stay as before


def env_of(user: User) -> dict[str, str]:
    """What login tools set for a user (runuser, su): the ranks get it unless -x says otherwise."""
    return {"HOME": user.home, "USER": user.name, "LOGNAME": user.name}


def become(user: User) -> None:
    """Make the calling process (a rank's child before exec) ``user``: its
    groups first, then its gid, then its uid (which ends root's powers)."""
    os.setgroups(list(user.groups))
    os.setresgid(user.gid, user.gid, user.gid)
    os.setresuid(user.uid, user.uid, user.uid)


def cannot_enter(user: User, directory: str) -> str | None:
    """Why ``user`` cannot make ``directory`` its working directory, or None.

    Asked of a child that becomes the user, so permissions, ACLs and groups
    count as they will for the ranks.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                become(user)
                os.chdir(directory)
            except Exception as exc:     # noqa: BLE001 - the child must always exit here
                os.write(w, (getattr(exc, "strerror", None) or str(exc)).encode())
        finally:
            os._exit(0)
    os.close(w)
    try:
        chunks = []
        while chunk := os.read(r, 512):
            chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    return b"".join(chunks).decode(errors="replace") or None
