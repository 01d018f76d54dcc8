"""``vmpi vm artefacts``: the files a cloud operator needs to give vmpi's VMs shared memory.

Why this exists: vmpi's fast path between two VMs of one host is an ivshmem-plain PCI
device whose memory is one host file that every VM of the job on that host maps.  vmpi
cannot create that device itself - the hypervisor's configuration does, whether the
operator runs QEMU directly, libvirt, or OpenStack Nova on top of libvirt.  Writing the
configuration for each of them by hand invites mismatches (a size that is not a power of
two, a name that differs between two VMs, a size libvirt and QEMU disagree on), so this
module writes all of it from one validated set of parameters: the libvirt device XML, the
QEMU arguments, and for OpenStack the flavor extra specs together with an honest account
of what stock Nova does not do (it has no ivshmem support) and how to extend it.

:func:`qemu_ivshmem_args` is the single definition of the QEMU arguments of the device;
``docs/CLOUD.md`` is the operator's walk-through.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from .vms import parse_size

__all__ = ["main", "qemu_ivshmem_args", "MIN_SIZE", "DEFAULT_SIZE", "DEFAULT_JOB"]

PROG = "vmpi vm artefacts"
DEFAULT_JOB = "vmpi-job"
DEFAULT_SIZE = 256 << 20
# The smallest region vmpi accepts (VMPI_REGION_MIN in shm/region.h); libvirt's own lower
# bound for a shmem device, 1 MiB, is below it.
MIN_SIZE = 4 << 20
QEMU_ID = "vmpi-ivshmem"
PLACEHOLDER_VF = "0000:00:00.0"

FILES = ("libvirt-ivshmem.xml", "libvirt-sriov-vf.xml", "qemu-args.txt",
         "openstack-flavor.txt", "openstack-nova.md")

USAGE = f"""\
usage: {PROG} --out DIR [--job NAME] [--size SIZE] [--vf PCI]

Writes what a cloud operator needs to give the VMs of a vmpi job one shared
ivshmem-plain device per host (see docs/CLOUD.md):
  libvirt-ivshmem.xml    the <shmem> device for the domain XML (with --vf, the VF too)
  libvirt-sriov-vf.xml   an SR-IOV VF as <interface type='hostdev'> (placeholder
                         address without --vf)
  qemu-args.txt          the same device as QEMU arguments, one per line
  openstack-flavor.txt   flavor extra specs: the stock ones that work, and those that
                         need an extension of Nova
  openstack-nova.md      what stock Nova can and cannot do, and two ways to extend it

options:
  --out DIR     directory to write into (created if missing)
  --job NAME    name of the shared memory, the same for every VM of the job on a
                host: 1-64 of A-Z a-z 0-9 _ . -, not starting with '.'
                (default {DEFAULT_JOB})
  --size SIZE   size of the device in bytes, or with K, M or G: a power of two,
                at least 4M (default 256M)
  --vf PCI      host PCI address of an SR-IOV VF for the network, [DDDD:]BB:SS.F
                such as 0000:3b:02.1
  -h, --help    show this help
"""

_JOB_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")
_VF_RE = re.compile(r"(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([01][0-9a-fA-F])\.([0-7])")


class UsageError(Exception):
    """A bad command line; the text names the option."""


@dataclass(frozen=True)
class PciAddress:
    """A PCI address; the fields are the numbers of ``domain:bus:slot.function``."""
    domain: int
    bus: int
    slot: int
    function: int

    def __str__(self) -> str:
        return f"{self.domain:04x}:{self.bus:02x}:{self.slot:02x}.{self.function:x}"

    def libvirt(self) -> str:
        """The ``<address>`` element of libvirt's domain XML."""
        return (f"<address type='pci' domain='0x{self.domain:04x}' bus='0x{self.bus:02x}' "
                f"slot='0x{self.slot:02x}' function='0x{self.function:x}'/>")


@dataclass(frozen=True)
class Params:
    out: str
    job: str
    size: int
    vf: PciAddress | None


def parse_pci(text: str) -> PciAddress:
    """The address of ``[DDDD:]BB:SS.F`` (domain 0000 when left out); ValueError if bad."""
    m = _VF_RE.fullmatch(text)
    if not m:
        raise ValueError(text)
    return PciAddress(int(m.group(1) or "0", 16), int(m.group(2), 16), int(m.group(3), 16),
                      int(m.group(4)))


def human_size(size: int) -> str:
    """``256M``, ``1G``: a size of at least 1 MiB that is a whole number of MiB."""
    return f"{size >> 30}G" if size % (1 << 30) == 0 else f"{size >> 20}M"


def qemu_ivshmem_args(mem_path: str, size: int) -> list[str]:
    """QEMU arguments attaching the ivshmem-plain device backed by mem_path (size bytes).

    Every VM given the same mem_path and size shares the memory (share=on)."""
    return ["-object",
            f"memory-backend-file,id={QEMU_ID},share=on,mem-path={mem_path},size={size}",
            "-device", f"ivshmem-plain,memdev={QEMU_ID}"]


def parse_args(argv: list[str]) -> Params | None:
    """The parameters of argv, or None for --help; raises UsageError."""
    values: dict[str, str] = {}
    it = iter(argv)
    for arg in it:
        if arg in ("-h", "--help"):
            return None
        name, eq, value = arg.partition("=")
        if name not in ("--out", "--job", "--size", "--vf"):
            raise UsageError(f"unknown argument {arg!r} (see --help)")
        if not eq:
            value = next(it, None)
            if value is None:
                raise UsageError(f"{name} needs a value")
        if name in values:
            raise UsageError(f"{name} given twice")
        values[name] = value
    if not values.get("--out"):
        raise UsageError("--out DIR is required")
    job = values.get("--job", DEFAULT_JOB)
    if not _JOB_RE.fullmatch(job):
        raise UsageError(f"--job: {job!r} is not a valid name (1-64 of A-Z a-z 0-9 _ . -, "
                         "not starting with '.')")
    size_text = values.get("--size")
    try:
        size = DEFAULT_SIZE if size_text is None else parse_size(size_text)
    except ValueError:
        raise UsageError(f"--size: not a size: {size_text!r} "
                         "(bytes, or with K, M or G)") from None
    if size < MIN_SIZE or size & (size - 1):
        raise UsageError(f"--size: must be a power of two of at least 4M "
                         f"(ivshmem-plain needs a power of two, vmpi at least 4 MiB), "
                         f"not {size_text}")
    vf = None
    if "--vf" in values:
        try:
            vf = parse_pci(values["--vf"])
        except ValueError:
            raise UsageError(f"--vf: not a PCI address: {values['--vf']!r} "
                             "(expected [DDDD:]BB:SS.F such as 0000:3b:02.1)") from None
    return Params(values["--out"], job, size, vf)


def libvirt_shmem_xml(p: Params) -> str:
    """libvirt-ivshmem.xml: the <shmem> device, inside <devices> with the VF when given."""
    shmem = (f"<shmem name='{p.job}'>\n"
             f"  <model type='ivshmem-plain'/>\n"
             f"  <size unit='M'>{p.size >> 20}</size>\n"
             f"</shmem>\n")
    head = f"""\
<!--
  vmpi: memory shared by the VMs of one job on one host, as an ivshmem-plain PCI
  device of {human_size(p.size)}.

  libvirt backs a <shmem> device by the host file /dev/shm/NAME, NAME being the
  element's name attribute, and every domain of the host whose <shmem> carries the
  same name maps that same file: this is how vmpi's ranks in different VMs see each
  other's writes.  Give this element unchanged to every VM of the job on a host (the
  size must match too), and never the same name to VMs of another tenant: every VM
  attached to the file can read and write all of it.

  Put it into the domain's <devices> (virsh edit DOMAIN) before the domain starts;
  vmpi looks for the device when a job starts.
"""
    if p.vf is None:
        return head + "-->\n" + shmem
    return (head + f"""
  The <devices> wrapper only makes this one XML document: paste what is inside it,
  the <shmem> and the SR-IOV VF {p.vf} for the network, into the domain's own
  <devices>.  libvirt-sriov-vf.xml holds the VF alone, for virsh attach-device.
-->
<devices>
""" + _indent(shmem) + _indent(_vf_interface(p.vf)) + "</devices>\n")


def _indent(text: str) -> str:
    return "".join("  " + line if line.strip() else line
                   for line in text.splitlines(keepends=True))


def _vf_interface(vf: PciAddress) -> str:
    return (f"<interface type='hostdev' managed='yes'>\n"
            f"  <source>\n"
            f"    {vf.libvirt()}\n"
            f"  </source>\n"
            f"</interface>\n")


def libvirt_vf_xml(p: Params) -> str:
    """libvirt-sriov-vf.xml: the VF of --vf, or a marked placeholder."""
    vf = p.vf or parse_pci(PLACEHOLDER_VF)
    if p.vf is None:
        which = f"""\
  PLACEHOLDER: {PLACEHOLDER_VF} is not a VF.  Replace domain, bus, slot and function
  below with the address of a VF of the host (lspci -D lists them as
  DDDD:BB:SS.F), or generate this file again with that address.
"""
    else:
        which = f"  The VF is the host's PCI device {vf}.\n"
    return f"""\
<!--
  vmpi: an SR-IOV virtual function passed into the VM, for the network between
  hosts (libfabric's verbs provider sees it as an RDMA device; tcp runs over it
  as over any NIC).  Each VM needs a VF of its own.
{which}
  managed='yes' lets libvirt detach the VF from its host driver and bind it to
  vfio-pci while the domain runs.  <interface type='hostdev'> is for Ethernet VFs
  (libvirt sets their MAC address); for a VF that is no Ethernet device, such as an
  InfiniBand one, use <hostdev mode='subsystem' type='pci' managed='yes'> with the
  same <source>.
-->
""" + _vf_interface(vf)


def qemu_args_text(p: Params) -> str:
    """qemu-args.txt: the arguments of the device, one a line, and those of the VF."""
    path = f"/dev/shm/{p.job}"
    lines = [
        f"# vmpi: shared memory for the VMs of job {p.job} on one host "
        f"({human_size(p.size)}, ivshmem-plain).",
        "# One QEMU argument per line; lines starting with # are comments.  Use:",
        "#   mapfile -t args < <(grep -v '^#' qemu-args.txt)",
        "#   qemu-system-x86_64 [your arguments] \"${args[@]}\"",
        "# Give the same -object (same mem-path, same size) to every VM of the job on the",
        f"# host: they all map {path}, which QEMU creates if it is missing and",
        "# leaves behind when the VM stops.",
        *qemu_ivshmem_args(path, p.size),
        "# An SR-IOV VF for the network between hosts; bind it to vfio-pci on the host first",
        "# (driverctl set-override ADDRESS vfio-pci, or sysfs driver_override).",
    ]
    vf_args = ["-device", f"vfio-pci,host={p.vf or 'BUS:SLOT.FN'}"]
    if p.vf is None:
        lines += ["# Not given (vmpi vm artefacts --vf ADDRESS); with one it would read:"]
        lines += [f"# {a}" for a in vf_args]
    else:
        lines += vf_args
    return "\n".join(lines) + "\n"


def flavor_text(p: Params) -> str:
    """openstack-flavor.txt: flavor extra specs, stock ones and the extension's."""
    return f"""\
# vmpi: flavor extra specs for the VMs of an MPI job, one KEY=VALUE a line.
# Apply the uncommented lines with:
#   grep -v '^#' openstack-flavor.txt | sed 's/^/--property=/' \\
#     | xargs openstack flavor set FLAVOR
# openstack-nova.md explains each of them.
#
# --- Stock OpenStack Nova: these work as they are. ---
#
# Every vCPU on a physical core of its own, so that ranks that poll are not descheduled:
hw:cpu_policy=dedicated
# Guest memory on huge pages (the compute hosts must reserve huge pages):
hw:mem_page_size=large
# The whole VM on one NUMA node of the host:
hw:numa_nodes=1
# An SR-IOV VF by PCI alias, for the network between hosts.  Needs [pci] device_spec and
# [pci] alias = {{..., "device_type": "type-VF", "name": "vmpi-vf"}} in nova.conf; leave it
# out when the VF comes from a Neutron port created with --vnic-type direct instead:
# pci_passthrough:alias=vmpi-vf:1
#
# Keeping the VMs of one job on one host is no flavor spec: create a server group with
# the affinity policy and start each VM with --hint group=GROUP_UUID.
#
# --- NEEDS THE EXTENSION (openstack-nova.md): stock Nova has no ivshmem support. ---
#
# Stock Nova accepts this key (its namespace is not one Nova validates) and ignores it;
# the extension attaches an ivshmem-plain device of this size to the VM:
vmpi:ivshmem_size={human_size(p.size)}
# The extension also reads the job's name from each VM's instance metadata (a server
# property, not a flavor spec), which also needs the extension:
#   openstack server create ... --property vmpi:job={p.job}
"""


def nova_md(p: Params) -> str:
    """openstack-nova.md: stock Nova's limits and the two ways to extend it."""
    size = human_size(p.size)
    return f"""\
# vmpi on OpenStack Nova: job `{p.job}`, {size} of shared memory

vmpi wants, on each compute host, one ivshmem-plain PCI device that all VMs of the job
on that host share (the same host file behind it), and optionally an SR-IOV virtual
function per VM for the network between hosts.  This file says which parts stock
OpenStack provides and which need an extension.

## What stock Nova cannot do

Stock OpenStack Nova (releases up to 2024) has **no support for ivshmem devices**: no
flavor extra spec, no image property and no API attaches one.  Nova writes each
instance's libvirt domain XML itself, and regenerates it on hard reboot, resize,
rebuild, evacuation and migration, so a `<shmem>` added by hand with `virsh edit`
disappears at the next of these.  The ivshmem part therefore **needs an extension**
(below); everything else is stock.

## What stock OpenStack does provide

* **Co-location.** A server group with the `affinity` policy puts all its VMs on one
  host: `openstack server group create --policy affinity vmpi-{p.job}`, then
  `openstack server create --hint group=GROUP_UUID ...` for each VM.  Creation fails
  when the host has no room; `soft-affinity` places them elsewhere instead (vmpi then
  uses the network between those VMs).  For a job over several hosts, use one group per
  host's share of the VMs.
* **SR-IOV VFs**, two ways:
  * a Neutron port with `--vnic-type direct` (`openstack port create --network NET
    --vnic-type direct PORT`, then `openstack server create --port PORT ...`), with the
    SR-IOV NIC agent and the `sriovnicswitch` mechanism driver on the Neutron side;
  * PCI passthrough by flavor: in nova.conf `[pci] device_spec` names the VFs a compute
    host offers, `[pci] alias` gives them a name, e.g.
    `alias = {{"vendor_id": "15b3", "product_id": "101c", "device_type": "type-VF",
    "name": "vmpi-vf"}}` (a ConnectX-6 VF; use your NIC's IDs), and the flavor asks for
    one with `pci_passthrough:alias=vmpi-vf:1` (the scheduler needs
    `PciPassthroughFilter`).  This suits VFs that are no Ethernet ports (InfiniBand).
* **CPU pinning** `hw:cpu_policy=dedicated`, **huge pages** `hw:mem_page_size=large`,
  **NUMA** `hw:numa_nodes=1`: see openstack-flavor.txt.

## The extension: two options

Both add this device (as in libvirt-ivshmem.xml) to the domain XML of every VM that
asks for it, with a NAME that is the same for all VMs of the job:

```xml
<shmem name='NAME'>
  <model type='ivshmem-plain'/>
  <size unit='M'>{p.size >> 20}</size>
</shmem>
```

Both must make NAME unique per tenant: build it from the instance's project ID and the
job name (for instance `vmpi-PROJECTID-{p.job}`), never from the user's job name alone,
or one tenant could join another's memory by choosing its name.

### Option A: a host agent driven by libvirt events (libvirt hook scripts do not suffice)

The obvious place, the qemu hook script `/etc/libvirt/hooks/qemu`, receives the
domain XML on stdin at `prepare` and `start`, but libvirt's hook documentation says
only the `migrate` and `restore` calls may hand back a changed XML; at `prepare` and
`start` the hook cannot add a device, and a hook must not call back into libvirt (it
would deadlock).  Verify this on your libvirt version before building on a hook.  What
works without touching Nova:

* a small agent on each compute host listens to libvirt's domain lifecycle events
  (libvirt-python `domainEventRegisterAny`, or `virsh event --loop --event lifecycle`);
* when a domain starts, the agent looks the instance up in Nova (the domain UUID is
  the instance UUID): if its flavor has `vmpi:ivshmem_size` and its metadata
  `vmpi:job`, it live-attaches the `<shmem>` with `virsh attach-device DOMAIN FILE
  --live` (libvirt can hot-plug ivshmem-plain devices);
* the qemu hook's `release` call may remove `/dev/shm/NAME` once no VM uses it.

Its limits: the guest needs a free hot-plug slot (for q35 guests, set
`[libvirt] num_pcie_ports` in nova.conf); the device appears a few seconds after boot,
so start the job only once `lspci -d 1af4:1110` shows it in every VM; the agent needs
read access to the Nova API.

### Option B: a Nova patch or driver extension

In Nova's libvirt driver, where the guest configuration is assembled
(`LibvirtDriver._get_guest_config` in `nova/virt/libvirt/driver.py`), add a shmem
device when the flavor has the extra spec `vmpi:ivshmem_size={size}` and the instance's
metadata the key `vmpi:job={p.job}`.  `nova/virt/libvirt/config.py` has no class for
`<shmem>`; add one (a `LibvirtConfigGuestDevice` with root element `shmem`, writing the
name, the model and the size in MiB).  Check the size as vmpi vm artefacts does (a power
of two, at least 4M).  Because the device is then part of the XML Nova generates, it
survives hard reboots, resizes and rebuilds, and it is present at boot.

For either option: QEMU refuses to live-migrate a VM with an ivshmem-plain device (it
is not in `master` mode), so plan on cold migration, or make the extension refuse live
migration of these instances with a clear error.

## Security

* The shared memory is readable and writable by every VM attached to it.  vmpi treats
  everything it reads there as untrusted input: it checks every offset, length and
  index against bounds before use, so a faulty or hostile VM can make a job fail with
  an error, but cannot make vmpi crash or write outside the job's area.  It does not
  keep the data secret: only VMs of one tenant, and in practice of one job, should
  share a name.
* The host file outlives the VMs.  Delete it before a name is used by anyone else.
* VFs passed through need an IOMMU on the host (VT-d/AMD-Vi enabled), as for any
  PCI passthrough.
"""


WRITERS = dict(zip(FILES, (libvirt_shmem_xml, libvirt_vf_xml, qemu_args_text, flavor_text,
                           nova_md)))


def write(p: Params) -> None:
    """Write every artefact into p.out (made if missing); raises OSError."""
    os.makedirs(p.out, exist_ok=True)
    for name, make in WRITERS.items():
        with open(os.path.join(p.out, name), "w", encoding="utf-8") as f:
            f.write(make(p))


def main(argv: list[str]) -> int:
    """``vmpi vm artefacts ARGS``: 0 on success, 2 on a bad command line, 1 if unwritable."""
    try:
        params = parse_args(argv)
    except UsageError as e:
        sys.stderr.write(f"{PROG}: {e}\n")
        return 2
    if params is None:
        sys.stdout.write(USAGE)
        return 0
    try:
        write(params)
    except OSError as e:
        sys.stderr.write(f"{PROG}: cannot write to {params.out}: {e}\n")
        return 1
    return 0
