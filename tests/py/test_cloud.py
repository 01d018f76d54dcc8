"""vmpi vm artefacts (vmpi.cloud): the files a cloud operator needs for vmpi's shared memory.

Each file is read back the way its consumer would read it: the XML files are parsed and
their elements and attributes checked against the command line, the QEMU arguments are
taken line by line as an argument vector.  Bad command lines must exit 2 with a message
that names the option and leave nothing behind.  If xmllint and libvirt's RNG schema are
installed, the XML is also validated as part of a full domain.
"""
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vmpi import cloud

from conftest import ROOT

DOMAIN_RNG = Path("/usr/share/libvirt/schemas/domain.rng")


def generate(out: Path, *args: str) -> Path:
    """Run vmpi vm artefacts --out out ARGS, which must succeed; return out."""
    assert cloud.main(["--out", str(out), *args]) == 0
    return out


def argv_of(path: Path) -> list[str]:
    """The arguments of a qemu-args.txt: its lines that are no comments."""
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


def spec_lines(path: Path) -> list[str]:
    """The KEY=VALUE lines of openstack-flavor.txt (comments left out)."""
    return [line for line in path.read_text().splitlines() if line and line[0] != "#"]


def check_address(addr: ET.Element, domain: int, bus: int, slot: int, function: int):
    assert addr.tag == "address"
    assert addr.attrib == {"type": "pci", "domain": f"0x{domain:04x}", "bus": f"0x{bus:02x}",
                           "slot": f"0x{slot:02x}", "function": f"0x{function:x}"}
    assert [int(addr.get(k), 16) for k in ("domain", "bus", "slot", "function")] == \
        [domain, bus, slot, function]


def check_interface(iface: ET.Element, *address: int):
    assert iface.tag == "interface"
    assert iface.attrib == {"type": "hostdev", "managed": "yes"}
    assert [c.tag for c in iface] == ["source"]
    (addr,) = list(iface.find("source"))
    check_address(addr, *address)


def check_shmem(shmem: ET.Element, job: str, mib: int):
    assert shmem.tag == "shmem"
    assert shmem.attrib == {"name": job}
    assert [c.tag for c in shmem] == ["model", "size"]
    assert shmem.find("model").attrib == {"type": "ivshmem-plain"}
    size = shmem.find("size")
    assert size.attrib == {"unit": "M"}
    assert int(size.text) == mib


def test_writes_exactly_the_five_files(tmp_path):
    out = generate(tmp_path / "a" / "b")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["libvirt-ivshmem.xml", "libvirt-sriov-vf.xml", "qemu-args.txt",
         "openstack-flavor.txt", "openstack-nova.md"])
    assert all(p.stat().st_size > 0 for p in out.iterdir())


@pytest.mark.parametrize("args, job, mib", [
    ([], "vmpi-job", 256),
    (["--job", "lammps_7.run-3", "--size", "4M"], "lammps_7.run-3", 4),
    (["--job=a--b", "--size=1G"], "a--b", 1024),
    (["--job", "J" * 64, "--size", "8388608"], "J" * 64, 8),
    (["--size", "2097152K", "--job", "x"], "x", 2048),
])
def test_libvirt_shmem(tmp_path, args, job, mib):
    out = generate(tmp_path, *args)
    root = ET.parse(out / "libvirt-ivshmem.xml").getroot()
    check_shmem(root, job, mib)
    text = (out / "libvirt-ivshmem.xml").read_text()
    assert "/dev/shm/" in text and "same name" in text


@pytest.mark.parametrize("vf, address", [
    ("0000:3b:02.1", (0, 0x3B, 0x02, 1)),
    ("abcd:FF:1f.7", (0xABCD, 0xFF, 0x1F, 7)),
    ("3b:10.0", (0, 0x3B, 0x10, 0)),
])
def test_vf_in_both_libvirt_files(tmp_path, vf, address):
    out = generate(tmp_path, "--vf", vf, "--job", "j1", "--size", "64M")
    devices = ET.parse(out / "libvirt-ivshmem.xml").getroot()
    assert devices.tag == "devices"
    assert [c.tag for c in devices] == ["shmem", "interface"]
    check_shmem(devices[0], "j1", 64)
    check_interface(devices[1], *address)
    check_interface(ET.parse(out / "libvirt-sriov-vf.xml").getroot(), *address)
    assert "PLACEHOLDER" not in (out / "libvirt-sriov-vf.xml").read_text()


def test_vf_placeholder_without_vf(tmp_path):
    out = generate(tmp_path)
    check_interface(ET.parse(out / "libvirt-sriov-vf.xml").getroot(), 0, 0, 0, 0)
    text = (out / "libvirt-sriov-vf.xml").read_text()
    comment = text[text.index("<!--"):text.index("-->")]
    assert "PLACEHOLDER" in comment and "0000:00:00.0" in comment and "Replace" in comment
    assert "interface" not in (out / "libvirt-ivshmem.xml").read_text().split("-->")[1]


@pytest.mark.parametrize("args, job, size", [
    ([], "vmpi-job", 256 << 20),
    (["--job", "hpc.7", "--size", "4M"], "hpc.7", 4194304),
    (["--job", "big", "--size", "2G"], "big", 2147483648),
])
def test_qemu_args(tmp_path, args, job, size):
    out = generate(tmp_path, *args)
    assert argv_of(out / "qemu-args.txt") == [
        "-object",
        f"memory-backend-file,id=vmpi-ivshmem,share=on,mem-path=/dev/shm/{job},size={size}",
        "-device", "ivshmem-plain,memdev=vmpi-ivshmem"]
    comments = [ln for ln in (out / "qemu-args.txt").read_text().splitlines() if ln[0] == "#"]
    assert "# vfio-pci,host=BUS:SLOT.FN" in comments


def test_qemu_args_with_vf(tmp_path):
    out = generate(tmp_path, "--vf", "3b:02.1", "--size", "16M", "--job", "q")
    assert argv_of(out / "qemu-args.txt") == [
        "-object",
        "memory-backend-file,id=vmpi-ivshmem,share=on,mem-path=/dev/shm/q,size=16777216",
        "-device", "ivshmem-plain,memdev=vmpi-ivshmem",
        "-device", "vfio-pci,host=0000:3b:02.1"]


def test_qemu_args_are_the_shared_definition():
    assert cloud.qemu_ivshmem_args("/dev/shm/x", 1 << 22) == [
        "-object", "memory-backend-file,id=vmpi-ivshmem,share=on,mem-path=/dev/shm/x,"
        "size=4194304", "-device", "ivshmem-plain,memdev=vmpi-ivshmem"]


@pytest.mark.parametrize("size, shown", [("256M", "256M"), ("1G", "1G"), ("4096K", "4M")])
def test_openstack_flavor(tmp_path, size, shown):
    out = generate(tmp_path, "--size", size, "--job", "wrf-2")
    text = (out / "openstack-flavor.txt").read_text()
    specs = spec_lines(out / "openstack-flavor.txt")
    assert specs == ["hw:cpu_policy=dedicated", "hw:mem_page_size=large", "hw:numa_nodes=1",
                     f"vmpi:ivshmem_size={shown}"]
    assert "pci_passthrough:alias=vmpi-vf:1" in text
    stock, _, extension = text.partition("NEEDS THE EXTENSION")
    assert extension, "the extension's specs are not labelled"
    assert "hw:cpu_policy=dedicated" in stock and "vmpi:ivshmem_size" not in stock
    assert f"vmpi:ivshmem_size={shown}" in extension and "vmpi:job=wrf-2" in extension


def test_openstack_nova_md(tmp_path):
    out = generate(tmp_path, "--job", "wrf-2", "--size", "512M")
    text = (out / "openstack-nova.md").read_text()
    flat = " ".join(text.split())
    for needed in ["pci_passthrough:alias", "vmpi:ivshmem_size=512M", "vmpi:job=wrf-2",
                   "--vnic-type direct", "affinity", "hw:cpu_policy=dedicated",
                   "hw:mem_page_size=large", "hw:numa_nodes", "/etc/libvirt/hooks/qemu",
                   "<size unit='M'>512</size>", "untrusted"]:
        assert needed in flat, needed
    assert "no support for ivshmem" in flat
    assert re.search(r"needs? an extension", flat, re.IGNORECASE)
    assert "### Option A" in text and "### Option B" in text


@pytest.mark.parametrize("args, option", [
    (["--size", "3M"], "--size"),
    (["--size", "12M"], "--size"),
    (["--size", "512K"], "--size"),
    (["--size", "1048575"], "--size"),
    (["--size", "2M"], "--size"),             # a valid ivshmem size, below vmpi's minimum
    (["--size", "lots"], "--size"),
    (["--size=-4M"], "--size"),
    (["--job", ".hidden"], "--job"),
    (["--job", "a/b"], "--job"),
    (["--job", "a,share=off"], "--job"),
    (["--job", "x" * 65], "--job"),
    (["--job="], "--job"),
    (["--vf", "0000:3b:20.1"], "--vf"),        # slot above 0x1f
    (["--vf", "3b:02.8"], "--vf"),
    (["--vf", "0000:3b:02"], "--vf"),
    (["--vf", "00000:3b:02.1"], "--vf"),
    (["--vf"], "--vf"),
    (["--colour", "red"], "--colour"),
])
def test_bad_input(tmp_path, capsys, args, option):
    out = tmp_path / "out"
    assert cloud.main(["--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vmpi vm artefacts: ") and option in err
    assert not out.exists()


def test_missing_out(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cloud.main(["--job", "j", "--size", "64M"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vmpi vm artefacts: ") and "--out" in err
    assert list(tmp_path.iterdir()) == []


def test_help(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cloud.main(["--job", "j", "-h"]) == 0
    usage = capsys.readouterr().out
    assert usage.startswith("usage: vmpi vm artefacts --out DIR")
    for option in ("--job", "--size", "--vf", "default 256M", "default vmpi-job"):
        assert option in usage
    assert list(tmp_path.iterdir()) == []


def test_unwritable_out(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cloud.main(["--out", str(blocker / "sub")]) == 1
    assert "vmpi vm artefacts: cannot write" in capsys.readouterr().err


def test_min_size_is_the_library_minimum(tmp_path):
    header = (ROOT / "shm" / "region.h").read_text()
    m = re.search(r"#define VMPI_REGION_MIN \((\d+)u << (\d+)\)", header)
    assert m, "VMPI_REGION_MIN not found in shm/region.h"
    assert cloud.MIN_SIZE == int(m.group(1)) << int(m.group(2))
    out = generate(tmp_path, "--size", str(cloud.MIN_SIZE))
    assert int(ET.parse(out / "libvirt-ivshmem.xml").getroot().find("size").text) == \
        cloud.MIN_SIZE >> 20


def minimal_domain(devices: list[ET.Element]) -> ET.Element:
    domain = ET.fromstring(
        "<domain type='kvm'><name>vmpi-test</name><memory unit='MiB'>512</memory>"
        "<os><type arch='x86_64' machine='pc'>hvm</type></os><devices/></domain>")
    domain.find("devices").extend(devices)
    return domain


def test_fragment_validates_against_libvirt_schema(tmp_path):
    xmllint = shutil.which("xmllint")
    if not xmllint or not DOMAIN_RNG.exists():
        missing = [n for n, ok in (("xmllint", xmllint), (str(DOMAIN_RNG), DOMAIN_RNG.exists()))
                   if not ok]
        pytest.skip(f"needs {' and '.join(missing)} (Debian: libxml2-utils, libvirt0)")
    out = generate(tmp_path / "out", "--vf", "0000:3b:02.1")

    def validate(domain: ET.Element) -> subprocess.CompletedProcess:
        path = tmp_path / "domain.xml"
        ET.ElementTree(domain).write(path)
        return subprocess.run([xmllint, "--noout", "--relaxng", str(DOMAIN_RNG), str(path)],
                              capture_output=True, text=True)

    fragment = list(ET.parse(out / "libvirt-ivshmem.xml").getroot())
    cp = validate(minimal_domain(fragment))
    assert cp.returncode == 0, cp.stderr
    # The schema does check shmem devices: a wrong model must fail.
    fragment[0].find("model").set("type", "no-such-model")
    assert validate(minimal_domain(fragment)).returncode != 0
