"""The guest image of ``vmpi vm``: a Debian kernel and an initramfs.

The kernel comes from Debian's ``linux-image-amd64`` (its versioned
dependency, fetched with ``apt-get download`` into the cache, or the .deb
named by ``VMPI_GUEST_KERNEL_DEB``). QEMU boots it directly as an ELF
(``-kernel vmlinux``, through the PVH entry point), which skips the
decompressor: under software emulation that halves the boot time. Only the
modules the guests need are kept: virtio_pci and virtio_net with their
dependencies. The ivshmem device needs no driver: vmpi maps its BAR2 through
sysfs.

The cache (``VMPI_CACHE_DIR``, else ``$XDG_CACHE_HOME/vmpi`` or
``~/.cache/vmpi``) holds ``kernel/<package>_<version>/`` with ``vmlinux``,
``release`` (the kernel's uname -r), ``modules.list`` (module files in load
order) and the modules under ``lib/modules/<release>/``.

Each job gets its own initramfs (a cpio "newc" archive): the project's
static ``vmpi-guest-init`` as ``/init`` (guest/init.c), the modules, the MPI
program and every shared library it loads - found with ``ldd``, plus
libfabric, which vmpi opens with dlopen - at the same paths as on this
machine, so RPATHs such as ``$ORIGIN/../lib`` resolve the same way inside.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import stat
import struct
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ImageError", "Kernel", "cache_dir", "kernel", "find_init", "write_initrd",
           "library_closure", "job_file", "nul_strings"]

KERNEL_PACKAGE = "linux-image-amd64"
GUEST_MODULES = ("virtio_pci", "virtio_net")
# libraries vmpi loads with dlopen, which ldd cannot see
DLOPENED = ("libfabric.so.1",)
# files that make the dynamic loader and libibverbs (under libfabric) quiet
# and fast in the guest, copied when this machine has them
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf")
ETC_DIRS = ("/etc/libibverbs.d",)

_LDD_RE = re.compile(r"^\s*(?:\S+\s+=>\s+)?(/\S+)\s+\(0x[0-9a-f]+\)\s*$")


class ImageError(Exception):
    pass


@dataclass
class Kernel:
    dir: Path
    release: str
    vmlinux: Path
    modules: list[str]   # guest paths, dependencies first


def cache_dir() -> Path:
    env = os.environ.get("VMPI_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg or Path.home() / ".cache") / "vmpi"


def _run(cmd: list[str], what: str, cwd: str | None = None) -> str:
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)
    except FileNotFoundError:
        raise ImageError(f"{what}: {cmd[0]} not found (a Debian machine is needed)") from None
    except subprocess.TimeoutExpired:
        raise ImageError(f"{what}: {' '.join(cmd)} took more than 10 minutes") from None
    if cp.returncode != 0:
        lines = [ln for ln in cp.stderr.splitlines() if ln.strip() and not ln.startswith("W:")]
        raise ImageError(f"{what}: {' '.join(cmd)} failed: {lines[-1] if lines else cp.returncode}")
    return cp.stdout


def _kernel_package() -> str:
    """The versioned package linux-image-amd64 depends on now."""
    for attempt in range(2):
        try:
            out = _run(["apt-cache", "depends", KERNEL_PACKAGE], "guest kernel")
        except ImageError:
            out = ""
        for line in out.splitlines():
            m = re.match(r"\s*Depends:\s*(linux-image-\S+)", line)
            if m:
                return m.group(1)
        if attempt == 0:
            # a fresh machine has no package lists yet
            _run(["apt-get", "update", "-qq"], "guest kernel")
    raise ImageError(f"guest kernel: apt knows no {KERNEL_PACKAGE}; set VMPI_GUEST_KERNEL_DEB "
                     "to a Debian linux-image .deb")


def _decompress_kernel(bzimage: bytes) -> bytes:
    """The ELF vmlinux inside a bzImage (xz or gzip payload, Debian's choices)."""
    for magic, open_ in ((b"\xfd7zXZ\x00", "xz"), (b"\x1f\x8b\x08", "gz")):
        start = bzimage.find(magic)
        while start >= 0:
            try:
                if open_ == "xz":
                    data = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(bzimage[start:])
                else:
                    data = zlib.decompressobj(wbits=31).decompress(bzimage[start:])
            except (lzma.LZMAError, zlib.error):
                data = b""
            if data[:4] == b"\x7fELF":
                return data
            start = bzimage.find(magic, start + 1)
    raise ImageError("guest kernel: no xz or gzip payload holding an ELF vmlinux in the bzImage")


def _modinfo_depends(data: bytes) -> list[str]:
    """The ``depends=`` list of a module's .modinfo ELF section (what depmod reads)."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ImageError("guest kernel: a module is not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(i: int) -> tuple[int, int, int]:
        name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, off, size

    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        if data[stroff + name:stroff + name + 9] == b".modinfo\0":
            for entry in data[off:off + size].split(b"\0"):
                if entry.startswith(b"depends="):
                    return [d for d in entry[8:].decode().split(",") if d]
    return []


def _module_order(root: Path, names: tuple[str, ...]) -> list[str]:
    """Module files (relative to root) of ``names`` and their dependencies, in load order.

    A kernel package ships no modules.dep (depmod makes it when the package
    is installed), so the dependencies come from the modules themselves.
    """
    by_name = {}
    for path in root.rglob("*.ko*"):
        by_name[path.name.split(".ko")[0].replace("-", "_")] = path
    order: list[str] = []

    def visit(name: str) -> None:
        path = by_name.get(name.replace("-", "_"))
        if path is None:
            return   # built into this kernel
        rel = str(path.relative_to(root))
        if rel in order:
            return
        data = path.read_bytes()
        if path.suffix == ".xz":
            data = lzma.decompress(data)
        for dep in _modinfo_depends(data):
            visit(dep)
        order.append(rel)

    for name in names:
        visit(name)
    return order


def _extract_kernel(deb: Path, dest: Path) -> None:
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        _run(["dpkg-deb", "-x", str(deb), tmp], "guest kernel")
        boot = sorted(Path(tmp, "boot").glob("vmlinuz-*"))
        mods = sorted(p for p in Path(tmp, "lib", "modules").glob("*/kernel") if p.is_dir())
        if not boot or not mods:
            raise ImageError(f"guest kernel: {deb.name} holds no vmlinuz or modules")
        release = mods[0].parent.name
        vmlinux = _decompress_kernel(boot[0].read_bytes())
        out = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".new-"))
        try:
            (out / "vmlinux").write_bytes(vmlinux)
            (out / "release").write_text(release + "\n")
            order = _module_order(mods[0].parent, GUEST_MODULES)
            for rel in order:
                src = mods[0].parent / rel
                dst = out / "lib" / "modules" / release / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                if src.suffix == ".xz":
                    dst = dst.with_suffix("")
                    dst.write_bytes(lzma.decompress(src.read_bytes()))
                else:
                    shutil.copyfile(src, dst)
            guest = [f"/lib/modules/{release}/{rel.removesuffix('.xz')}" for rel in order]
            (out / "modules.list").write_text("".join(p + "\n" for p in guest))
            if dest.exists():
                shutil.rmtree(dest)
            out.rename(dest)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise


def _load(kdir: Path) -> Kernel | None:
    try:
        release = (kdir / "release").read_text().strip()
        modules = (kdir / "modules.list").read_text().split()
    except OSError:
        return None
    if not (kdir / "vmlinux").is_file():
        return None
    return Kernel(kdir, release, kdir / "vmlinux", modules)


def kernel(refresh: bool = False, log=None) -> Kernel:
    """The cached guest kernel, fetched and unpacked first if needed."""
    base = cache_dir() / "kernel"
    deb_env = os.environ.get("VMPI_GUEST_KERNEL_DEB")
    if not refresh and not deb_env:
        found = [k for k in map(_load, sorted(base.glob("*"))) if k is not None]
        if found:
            return found[-1]
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ImageError(f"guest kernel: cannot create {base}: {exc.strerror}") from None
    if deb_env:
        deb = Path(deb_env)
        if not deb.is_file():
            raise ImageError(f"guest kernel: VMPI_GUEST_KERNEL_DEB={deb_env}: no such file")
        dest = base / deb.name.removesuffix(".deb")
        cached = None if refresh else _load(dest)
        if cached is not None:
            return cached
        _extract_kernel(deb, dest)
    else:
        pkg = _kernel_package()
        if log:
            log(f"fetching the guest kernel ({pkg}) with apt-get download")
        with tempfile.TemporaryDirectory(dir=base) as tmp:
            os.chmod(tmp, 0o755)   # apt's sandbox user writes there
            try:
                _run(["apt-get", "download", "-qq", pkg], "guest kernel", cwd=tmp)
            except ImageError:
                # package lists older than the archive name a file it no longer has
                _run(["apt-get", "update", "-qq"], "guest kernel")
                pkg = _kernel_package()
                _run(["apt-get", "download", "-qq", pkg], "guest kernel", cwd=tmp)
            debs = sorted(Path(tmp).glob("*.deb"))
            if not debs:
                raise ImageError(f"guest kernel: apt-get download {pkg} left no .deb")
            dest = base / debs[0].name.removesuffix(".deb")
            _extract_kernel(debs[0], dest)
    k = _load(dest)
    if k is None:
        raise ImageError(f"guest kernel: {dest} is incomplete")
    return k


def find_init(extra: list[Path] = ()) -> Path:
    """The static vmpi-guest-init built with the library."""
    here = Path(__file__).parent            # .../python/vmpi or .../lib/vmpi/python/vmpi
    candidates = list(extra)
    if os.environ.get("VMPI_GUEST_INIT"):
        candidates.insert(0, Path(os.environ["VMPI_GUEST_INIT"]))
    if os.environ.get("VMPI_BUILD"):
        candidates.append(Path(os.environ["VMPI_BUILD"]) / "lib/vmpi/guest/init")
    candidates += [here.parents[1] / "guest/init",          # installed: lib/vmpi/guest
                   here.parents[1] / "build/lib/vmpi/guest/init"]   # source tree's build
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise ImageError("the guest's init (vmpi-guest-init) is not built: run 'make' "
                     "(or set VMPI_BUILD to the build directory)")


def library_closure(paths: list[str], env: dict[str, str] | None = None) -> list[str]:
    """Every shared library (absolute path) that ``paths`` load, as ldd finds them."""
    found: list[str] = []
    for p in paths:
        try:
            cp = subprocess.run(["ldd", p], capture_output=True, text=True, env=env, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ImageError(f"ldd {p}: {exc}") from None
        if "not a dynamic executable" in cp.stdout + cp.stderr:
            continue
        for line in cp.stdout.splitlines():
            if "=> not found" in line:
                raise ImageError(f"{p} needs {line.split()[0]}, which is not found here")
            m = _LDD_RE.match(line)
            if m and m.group(1) not in found:
                found.append(m.group(1))
    return found


def _dlopened(env: dict[str, str] | None) -> list[str]:
    try:
        out = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    paths = []
    for name in DLOPENED:
        for line in out.splitlines():
            if line.strip().startswith(name + " ") and "x86-64" in line:
                paths.append(line.rsplit("=>", 1)[1].strip())
                break
    return paths + library_closure(paths, env)


class _Cpio:
    """Writes a cpio "newc" archive, the format the kernel unpacks into its rootfs."""

    def __init__(self, f):
        self.f = f
        self.ino = 0
        self.dirs: set[str] = {""}
        self.files: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        self.ino += 1
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0)
        head = b"070701" + b"".join(b"%08X" % v for v in fields) + name.encode() + b"\0"
        self.f.write(head + b"\0" * (-len(head) % 4))
        self.f.write(data + b"\0" * (-len(data) % 4))

    def dir(self, path: str, mode: int = 0o755) -> None:
        path = path.strip("/")
        if path in self.dirs:
            return
        self.dir(os.path.dirname(path))
        self.dirs.add(path)
        self._entry(path, stat.S_IFDIR | mode)

    def file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        path = path.strip("/")
        if path in self.files:
            return
        self.dir(os.path.dirname(path))
        self.files.add(path)
        self._entry(path, stat.S_IFREG | mode, data)

    def copy(self, host_path: str, guest_path: str | None = None) -> None:
        try:
            data = Path(host_path).read_bytes()   # through symlinks: the loader opens the name
            mode = os.stat(host_path).st_mode & 0o777
        except OSError as exc:
            raise ImageError(f"guest image: cannot read {host_path}: {exc.strerror}") from None
        self.file(guest_path or host_path, data, mode)

    def close(self) -> None:
        self._entry("TRAILER!!!", 0)


def nul_strings(parts: list[str]) -> bytes:
    """parts as guest/init.c reads them: each NUL-terminated."""
    if any("\0" in p for p in parts):
        raise ImageError("an argument or environment value holds a NUL byte")
    return b"".join(p.encode("utf-8", errors="surrogateescape") + b"\0" for p in parts)


def job_file(cwd: str, argv: list[str], env: dict[str, str]) -> bytes:
    """A job as guest/init.c reads it: /vmpi/job, or a start frame's payload."""
    return nul_strings([cwd, str(len(argv)), *argv, str(len(env)),
                        *(f"{k}={v}" for k, v in env.items())])


def write_initrd(path: str, k: Kernel, init: Path, argv: list[str], env: dict[str, str],
                 cwd: str) -> set[str]:
    """Write the job's initramfs: init, modules, program, libraries, job
    file. Returns the paths of the program and libraries in it."""
    libs = library_closure([argv[0]], env) + _dlopened(env)
    with open(path, "wb") as f:
        cp = _Cpio(f)
        for d in ("proc", "sys", "dev", "root", "vmpi"):
            cp.dir(d)
        cp.copy(str(init), "/init")
        for m in k.modules:
            cp.copy(str(k.dir / m.lstrip("/")), m)
        cp.file("/vmpi/modules", "".join(m + "\n" for m in k.modules).encode())
        cp.file("/vmpi/job", job_file(cwd, argv, env))
        cp.dir("tmp", 0o1777)
        cp.copy(argv[0])
        for lib in libs:
            cp.copy(lib)
        for etc in ETC_FILES:
            if os.path.isfile(etc):
                cp.copy(etc)
        for d in ETC_DIRS:
            if os.path.isdir(d):
                cp.dir(d)
                for name in sorted(os.listdir(d)):
                    if os.path.isfile(os.path.join(d, name)):
                        cp.copy(os.path.join(d, name))
        cp.close()
    return {os.path.normpath(p) for p in (argv[0], *libs)}
