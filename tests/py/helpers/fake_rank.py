#!/usr/bin/env python3
"""A fake MPI rank: speaks PMI-1 over PMI_FD like MPICH's simple PMI client.

usage: fake_rank.py MODE [ARGS...]

modes:
  act SPEC        SPEC is "R=ACTION,...,*=ACTION" (per rank, * = the rest).
                  ACTION: ok | exitN (finalize, exit N) | nofinN (exit N
                  without finalize) | sigN[+MS] (kill itself with signal N,
                  after MS milliseconds) |
                  abortN:MESSAGE | hang (sleep, with a grandchild) |
                  stubborn (hang, ignoring SIGTERM) | nopmi (exit 0 without
                  ever talking PMI)
  kvs             init, put, barrier, get every rank's key, check, finalize
  lines COUNT LEN write COUNT lines of LEN chars, each in several pieces
  affinity        print the CPU affinity
  shm ACTION      create $VMPI_SHM_DIR/vmpi-<VMPI_JOB_ID>-x<rank>, then ACTION
  nonet BARRIERS  join a vmpi job as a rank of another host that publishes
                  its business card but no network address: put the card,
                  enter BARRIERS PMI barriers (those of vmpi's MPI_Init),
                  then wait to be killed

Every action but nopmi inits PMI, writes its pid file (with FAKE_PIDDIR set,
"<pid> <grandchild pid>" to $FAKE_PIDDIR/<rank>.pid) and enters a PMI barrier
before acting, so all ranks are up before any of them fails.
"""
import os
import signal
import socket
import subprocess
import sys
import time

RANK = int(os.environ["PMI_RANK"])
SIZE = int(os.environ["PMI_SIZE"])


class PMI:
    def __init__(self):
        self.sock = socket.socket(fileno=int(os.environ["PMI_FD"]))
        self.buf = b""

    def send(self, line):
        self.sock.sendall(line.encode() + b"\n")

    def recv(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(4096)
            if not data:
                raise EOFError("PMI server closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def query(self, line):
        self.send(line)
        return self.recv()

    @staticmethod
    def attrs(reply):
        out = {}
        for tok in reply.split(" "):
            k, _, v = tok.partition("=")
            out[k] = v
        return out

    def init(self):
        r = self.attrs(self.query("cmd=init pmi_version=1 pmi_subversion=1"))
        assert r["cmd"] == "response_to_init" and r["rc"] == "0", r
        r = self.attrs(self.query("cmd=get_maxes"))
        assert r["cmd"] == "maxes", r
        self.kvsname = self.attrs(self.query("cmd=get_my_kvsname"))["kvsname"]

    def finalize(self):
        r = self.query("cmd=finalize")
        assert r == "cmd=finalize_ack", r


def write_pids(grandchild=0):
    d = os.environ.get("FAKE_PIDDIR")
    if d:
        tmp = os.path.join(d, f"{RANK}.tmp")
        with open(tmp, "w") as f:
            f.write(f"{os.getpid()} {grandchild}\n")
        os.replace(tmp, os.path.join(d, f"{RANK}.pid"))


def do_action(action, pmi):
    if action == "nopmi":
        sys.exit(0)
    pmi.init()
    gc = None
    if action in ("hang", "stubborn"):
        if action == "stubborn":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        gc = subprocess.Popen(["sleep", "60"])
    write_pids(gc.pid if gc else 0)
    # every rank has written its pid file before any of them acts
    r = pmi.query("cmd=barrier_in")
    assert r == "cmd=barrier_out", r
    if gc:
        time.sleep(60)
        sys.exit(0)
    if action == "ok":
        pmi.finalize()
        sys.exit(0)
    if action.startswith("exit"):
        pmi.finalize()
        sys.exit(int(action[4:]))
    if action.startswith("nofin"):
        sys.exit(int(action[5:]))
    if action.startswith("sig"):
        sig, _, ms = action[3:].partition("+")
        time.sleep(int(ms or 0) / 1000)
        sys.stdout.flush()
        os.kill(os.getpid(), int(sig))
        time.sleep(10)
        sys.exit(99)
    if action.startswith("abort"):
        code, _, msg = action[5:].partition(":")
        pmi.send(f"cmd=abort exitcode={code} message={msg}")
        time.sleep(30)
        sys.exit(98)
    raise SystemExit(f"unknown action {action!r}")


def act(spec):
    actions = {}
    for item in spec.split(","):
        who, _, what = item.partition("=")
        actions[who] = what
    action = actions.get(str(RANK), actions.get("*", "ok"))
    do_action(action, PMI())


def kvs():
    pmi = PMI()
    pmi.init()
    r = pmi.attrs(pmi.query("cmd=get_universe_size"))
    # Hydra answers -1 (unknown) unless given -usize; vmpirun answers SIZE
    assert r["cmd"] == "universe_size" and r["size"] in (str(SIZE), "-1"), r
    r = pmi.attrs(pmi.query("cmd=get_appnum"))
    assert r == {"cmd": "appnum", "appnum": "0"}, r
    r = pmi.query(f"cmd=put kvsname={pmi.kvsname} key=card-{RANK} value=addr-{RANK}-{os.getpid()}")
    assert r == "cmd=put_result rc=0 msg=success", r
    r = pmi.query("cmd=barrier_in")
    assert r == "cmd=barrier_out", r
    got = []
    for peer in range(SIZE):
        r = pmi.attrs(pmi.query(f"cmd=get kvsname={pmi.kvsname} key=card-{peer}"))
        assert r["cmd"] == "get_result" and r["rc"] == "0", r
        got.append(r["value"])
    r = pmi.query(f"cmd=get kvsname={pmi.kvsname} key=nosuchkey")
    assert r == "cmd=get_result rc=-1 msg=key_nosuchkey_not_found value=unknown", r
    print(f"rank {RANK} pid {os.getpid()} kvs {pmi.kvsname} got {' '.join(got)}", flush=True)
    pmi.finalize()


def lines(count, length):
    ch = "abcdefghijklmnopqrstuvwxyz"[RANK % 26].encode()
    line = ch * length
    third = length // 3
    for _ in range(count):
        # three writes per line: the pipe sees partial lines
        os.write(1, line[:third])
        os.write(1, line[third:2 * third])
        os.write(1, line[2 * third:] + b"\n")
    os.write(1, ch * 7)  # a final line without newline


def affinity():
    cpus = sorted(os.sched_getaffinity(0))
    print(f"rank {RANK} cpus {','.join(map(str, cpus))}", flush=True)


def shm(action):
    d = os.environ.get("VMPI_SHM_DIR") or "/dev/shm"
    jobid = os.environ["VMPI_JOB_ID"]
    path = os.path.join(d, f"vmpi-{jobid}-x{RANK}")
    with open(path, "w") as f:
        f.write("segment\n")
    pidfile = os.path.join(d, f"vmpi-{jobid}.launcher")
    with open(pidfile) as f:
        launcher_pid = int(f.read().split()[0])
    print(f"rank {RANK} created {path} launcher {launcher_pid} parent {os.getppid()}", flush=True)
    do_action(action, PMI())


def nonet(barriers):
    pmi = PMI()
    pmi.init()
    card = f"{os.getpid()}|fake-vm-{RANK}|fake-host-{RANK}|fake{RANK}|0|fake-boot-{RANK}"
    r = pmi.query(f"cmd=put kvsname={pmi.kvsname} key=vmpi-card-{RANK} value={card}")
    assert r == "cmd=put_result rc=0 msg=success", r
    for _ in range(barriers):
        r = pmi.query("cmd=barrier_in")
        assert r == "cmd=barrier_out", r
    time.sleep(60)


def main():
    mode = sys.argv[1]
    if mode == "act":
        act(sys.argv[2])
    elif mode == "kvs":
        kvs()
    elif mode == "lines":
        lines(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "affinity":
        affinity()
    elif mode == "shm":
        shm(sys.argv[2])
    elif mode == "nonet":
        nonet(int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
