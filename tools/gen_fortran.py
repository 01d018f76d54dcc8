#!/usr/bin/env python3
"""vmpi's Fortran interface, generated from include/mpi.h and the MPI Forum's
machine-readable standard (the pympistandard package).

  (no option)   write include/mpif.h, api/fortran/mpi.f90 (the `mpi`
                module), mpi_f08.f90, mpi_sizeofs.f90 (MPI_SIZEOF), the
                f_*.c (the C side of every binding) and manifest.txt in
                api/fortran; needs pympistandard:
                  python3 -m venv /tmp/pvf && /tmp/pvf/bin/pip install pympistandard
                  /tmp/pvf/bin/python tools/gen_fortran.py
  --compare-mpich MPIF
                mpif.h's numbers equal those of MPICH's mpif.h (Debian:
                /usr/include/x86_64-linux-gnu/mpich/mpif.h) for every name
                both have; the names only MPICH has are listed.
  --check [LIB] without pympistandard: the generated files are what this
                script last wrote from the current mpi.h and mpio.h (the
                manifest's hashes), every function they declare has a Fortran binding
                or is C-only in the standard, and LIB (libvmpifort) exports
                each binding under MPICH's eight spellings.

The bindings follow MPICH's Fortran ABI (api/fortran/fortran.h says how);
the numbers in mpif.h are mpi.h's, with the Fortran-side differences MPICH
has (predefined attribute keys are the C key + 1, string maxima are the C
buffer size - 1).
"""
import hashlib
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "include" / "mpi.h"
MPIO = ROOT / "include" / "mpio.h"    # MPI-IO, included by mpi.h
MPIF = ROOT / "include" / "mpif.h"
FDIR = ROOT / "api" / "fortran"
MODULE = FDIR / "mpi.f90"
MODULE08 = FDIR / "mpi_f08.f90"
SIZEOFS = FDIR / "mpi_sizeofs.f90"
MANIFEST = FDIR / "manifest.txt"

# Bindings written by hand (api/fortran/callbacks.c, deprecated.c, spawn.c):
# user callbacks with Fortran conventions, attribute values that are
# integers in Fortran, MPI-1 routines the standard no longer describes, and
# spawn's arrays of argument lists.
HAND = {
    "MPI_Comm_create_keyval", "MPI_Type_create_keyval", "MPI_Win_create_keyval",
    "MPI_Keyval_create", "MPI_Comm_get_attr", "MPI_Type_get_attr", "MPI_Win_get_attr",
    "MPI_Attr_get", "MPI_Attr_put", "MPI_Grequest_start", "MPI_Buffer_detach",
    "MPI_Address", "MPI_Type_hvector", "MPI_Type_hindexed", "MPI_Type_struct",
    "MPI_Type_extent", "MPI_Type_lb", "MPI_Type_ub", "MPI_Errhandler_create",
    "MPI_Errhandler_set", "MPI_Errhandler_get", "MPI_Comm_spawn", "MPI_Comm_spawn_multiple",
    "MPI_Register_datarep",
}
# Fortran-only procedures the hand-written files add (callbacks.c).
FORTRAN_ONLY = [
    "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN", "MPI_COMM_NULL_COPY_FN",
    "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN", "MPI_TYPE_NULL_COPY_FN",
    "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN", "MPI_WIN_NULL_COPY_FN",
    "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN", "MPI_F_SYNC_REG", "MPI_CONVERSION_FN_NULL",
]

# ---------------------------------------------------------------- mpi.h


def header_text():
    """mpi.h and the header it includes for MPI-IO, as one text."""
    return HEADER.read_text() + MPIO.read_text()



def header_decls(text):
    """[(ret, name, [(ctype, cname, array suffix such as "[]" or "[][3]")])]
    of every VMPI_API line."""
    body = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = []
    for ret, name, params in re.findall(
            r"VMPI_API\(\s*([\w\s\*]+?),\s*(MPI_\w+),\s*\((.*?)\)\)", body, re.S):
        plist = []
        for p in " ".join(params.split()).split(","):
            p = p.strip()
            if p in ("void", "", "..."):
                continue
            m = re.match(r"(.*?)(\w+)\s*((?:\[\s*\w*\s*\])*)$", p)
            ctype = m.group(1).strip()
            plist.append((ctype, m.group(2), m.group(3).replace(" ", "")))
        out.append((" ".join(ret.split()), name, plist))
    return out


def header_consts(text):
    """{name: int} of mpi.h's integer-valued MPI_ macros."""
    raw = {}
    for name, val in re.findall(r"^#define\s+(MPI_\w+)\s+(.+?)\s*(?:/\*.*)?$", text, re.M):
        raw[name] = val.strip()
    vals = {}

    def ev(v, depth=0):
        v = v.strip()
        while True:
            m = re.fullmatch(r"\((.*)\)", v)
            if not m:
                break
            v = m.group(1).strip()
        m = re.fullmatch(r"\((MPI_\w+)\)\s*(.+)", v)   # a cast to a handle type
        if m:
            v = m.group(2)
        if re.fullmatch(r"-?\s*(0x[0-9a-fA-F]+|\d+)", v):
            n = int(v.replace(" ", ""), 0)
            return n - (1 << 32) if n >= 1 << 31 else n
        if v in raw and depth < 4:
            return ev(raw[v], depth + 1)
        return None

    for block in re.findall(r"enum\s+\w*\s*\{(.*?)\}", text, re.S):
        for name, val in re.findall(r"(MPI_\w+)\s*=\s*(-?\d+)", block):
            raw[name] = val
    for name, val in raw.items():
        if "*" in val:          # pointers: sentinels and callback macros
            continue
        if name.startswith("MPI_T_") and not name.startswith("MPI_T_ERR_"):
            continue            # the tool interface is C-only but for its error classes
        n = ev(val)
        if n is not None:
            vals[name] = n
    return vals


def fortran_consts(c):
    """The values mpif.h gives, MPICH's Fortran-side differences applied."""
    f = dict(c)
    for k in ("MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
              "MPI_LASTUSEDCODE", "MPI_APPNUM", "MPI_WIN_BASE", "MPI_WIN_SIZE",
              "MPI_WIN_DISP_UNIT", "MPI_WIN_CREATE_FLAVOR", "MPI_WIN_MODEL"):
        f[k] = c[k] + 1
    for k in list(f):
        if re.fullmatch(r"MPI_MAX_(PROCESSOR_NAME|ERROR_STRING|OBJECT_NAME|LIBRARY_VERSION_STRING"
                        r"|INFO_KEY|INFO_VAL|PORT_NAME|DATAREP_STRING)", k):
            f[k] = c[k] - 1
    # Fortran's status is an array: these are its 1-based indices.
    f.update(MPI_SOURCE=3, MPI_TAG=4, MPI_ERROR=5, MPI_STATUS_SIZE=5)
    return f


# ---------------------------------------------------------------- mpif.h

KINDS = [("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8),
         ("MPI_INTEGER_KIND", 4)]
# Constants that name other constants keep the spelling order of mpi.h;
# MPI_INTEGER16 is MPI_DATATYPE_NULL there, so it is simply its value.


def fixed(line):
    """A line valid in fixed and free form: column 7, at most 72 columns."""
    line = "       " + line
    assert len(line) <= 72, line
    return line


# Constants of another kind than default INTEGER (MPI-3.1 A.1.1): a binding
# reads them through a pointer to that kind, so a default INTEGER would
# leave half of the value to whatever follows it in memory.
WIDE = {"MPI_DISPLACEMENT_CURRENT": "MPI_OFFSET_KIND"}


def mpif_constants(f):
    lines = []
    for name, val in KINDS:
        lines += [fixed(f"INTEGER {name}"), fixed(f"PARAMETER ({name}={val})")]
    for name in sorted(f):
        t = f"INTEGER(KIND={WIDE[name]})" if name in WIDE else "INTEGER"
        lines += [fixed(f"{t} {name}"), fixed(f"PARAMETER ({name}={f[name]})")]
    lines += [fixed("LOGICAL MPI_SUBARRAYS_SUPPORTED"),
              fixed("PARAMETER (MPI_SUBARRAYS_SUPPORTED=.FALSE.)"),
              fixed("LOGICAL MPI_ASYNC_PROTECTS_NONBLOCKING"),
              fixed("PARAMETER (MPI_ASYNC_PROTECTS_NONBLOCKING=.FALSE.)")]
    return lines


# The sentinels, in MPICH's COMMON blocks (fortran.h has their C side).
COMMONS = """INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)
INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)
INTEGER MPI_ERRCODES_IGNORE(1)
CHARACTER*1 MPI_ARGVS_NULL(1,1)
CHARACTER*1 MPI_ARGV_NULL(1)
INTEGER MPI_BOTTOM, MPI_IN_PLACE
INTEGER MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY
COMMON /MPIFCMB5/ MPI_UNWEIGHTED
COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY
COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE
COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL
SAVE /MPIFCMB5/, /MPIFCMB9/
SAVE /MPIPRIV1/, /MPIPRIV2/, /MPIPRIVC/""".splitlines()


def mpif_h(f):
    lines = ["! vmpi's mpif.h: generated by tools/gen_fortran.py from include/mpi.h;",
             "! do not edit. Fixed and free source form alike."]
    lines += mpif_constants(f) + [fixed(l) for l in COMMONS] + callback_externals()
    lines += [fixed("EXTERNAL MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK"),
              fixed("DOUBLE PRECISION MPI_WTIME, MPI_WTICK"),
              fixed("DOUBLE PRECISION PMPI_WTIME, PMPI_WTICK"),
              fixed("EXTERNAL MPI_AINT_ADD, MPI_AINT_DIFF"),
              fixed("EXTERNAL PMPI_AINT_ADD, PMPI_AINT_DIFF"),
              fixed("INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF"),
              fixed("INTEGER(KIND=MPI_ADDRESS_KIND) PMPI_AINT_ADD"),
              fixed("INTEGER(KIND=MPI_ADDRESS_KIND) PMPI_AINT_DIFF")]
    return "\n".join(lines) + "\n"


def callback_externals():
    ext = [n for n in FORTRAN_ONLY if "_FN" in n]
    return [fixed("EXTERNAL " + ", ".join(ext[i:i + 2])) for i in range(0, len(ext), 2)]


# Choice buffers (and Alloc_mem's base pointer, which may be an INTEGER or
# a TYPE(C_PTR)) take any type and rank: gfortran's NO_ARG_CHECK. So do
# graph weights, which may be the scalar MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY.
CHOICE = ("BUFFER", "C_BUFFER", "C_BUFFER2", "WEIGHT")
FTYPES = {"INTEGER": "integer", "LOGICAL": "logical", "CHARACTER*(*)": "character(len=*)",
          "DOUBLE PRECISION": "double precision", "EXTERNAL": "external"}


def f90_interface(proc, pname):
    """An interface body for MPI_X or PMPI_X from the standard's MPI-3.1
    Fortran signature."""
    lines = str(proc.express.f90).splitlines()
    m = re.fullmatch(r"(.*?)\s*MPI_(\w+)\((.*)\)", lines[0].strip())
    ftype, name, args = m.group(1), pname + "_" + m.group(2), m.group(3)
    kinds = {q["name"].upper(): q["kind"] for q in proc._parseset["parameters"]}
    kind_of = lambda t: FTYPES.get(t) or t.lower()
    decls = []
    for l in lines[1:]:
        t, names = re.fullmatch(r"\s*(<type>|INTEGER\(KIND=\w+\)|INTEGER|LOGICAL|EXTERNAL"
                                r"|CHARACTER\*\(\*\)|DOUBLE PRECISION)\s+(.*)", l).groups()
        for v in re.findall(r"\w+(?:\([^)]*\))?", names):
            var = v.split("(")[0]
            dim = v[len(var):]
            if kinds.get(var) in CHOICE:
                decls += [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {var}",
                          f"type(*), dimension(*) :: {var}"]
            elif t == "EXTERNAL":
                decls.append(f"external :: {var}")
            else:
                decls.append(f"{kind_of(t)} :: {var}" + ("(" + dim[1:-1].replace(" ", "") + ")"
                                                          if dim else ""))
    kw = f"{kind_of(ftype)} function" if ftype else "subroutine"
    end = "function" if ftype else "subroutine"
    head = f"{kw} {name}({args})"
    out = [head if len(head) < 100 else
           head[:head.rindex(", ", 0, 90) + 1] + " &\n        " + head[head.rindex(", ", 0, 90) + 2:]]
    out += ["  import", "  implicit none"] + ["  " + d for d in decls] + [f"end {end} {name}"]
    return out


def mpi_module(f, bound):
    """The `mpi` module: mpif.h's constants and sentinels (the same COMMON
    blocks), explicit interfaces of every bound MPI-3.1 routine (MPI and
    PMPI; choice buffers take any type and rank) and MPI_SIZEOF
    (mpi_sizeofs_module)."""
    import pympistandard as std
    std.use_api_version(1)
    body = mpif_constants(f) + [fixed(l) for l in COMMONS] + callback_externals()
    ifaces = []
    for name in bound:
        proc = std.PROCEDURES.get(name.lower())
        if proc is None:    # MPI-1 routines the standard no longer has
            continue
        for pname in ("MPI", "PMPI"):
            ifaces += ["   " + l for l in f90_interface(proc, pname)]
    return ("! vmpi's `mpi` module: generated by tools/gen_fortran.py; do not edit.\n"
            "module mpi\n       use mpi_sizeofs\n       implicit none\n" +
            "\n".join(body + ["interface"] + ifaces) +
            "\nend interface\nend module mpi\n")


# MPI_SIZEOF's specific procedures: MPICH's names (mpi_sizeof_<suffix>,
# <suffix>v for assumed-size arrays) in a module named as MPICH's, so a
# program built with MPICH's mpi module finds them in libmpichfort.so.12.
SIZEOF_TYPES = [("ch", "character(len=1)"), ("cx", "complex(kind=4)"), ("d", "real(kind=8)"),
                ("i", "integer"), ("i1", "integer(kind=1)"), ("i2", "integer(kind=2)"),
                ("i8", "integer(kind=8)"), ("l", "logical"), ("r", "real(kind=4)")]


def mpi_sizeofs_module():
    procs, body = [], []
    for suf, t in SIZEOF_TYPES:
        for v, dim, elem in (("", "", "x"), ("v", ", dimension(*)", "x(1)")):
            n = f"mpi_sizeof_{suf}{v}"
            procs.append(n)
            body += [f"  subroutine {n}(x, size, ierror)", f"    {t}{dim} :: x",
                     "    integer :: size, ierror", f"    size = storage_size({elem}) / 8",
                     "    ierror = 0", f"  end subroutine {n}"]
    lists = [", ".join(procs[i:i + 4]) for i in range(0, len(procs), 4)]
    return "\n".join(
        ["! MPI_SIZEOF (MPI-3.1 17.1.9) for the mpi and mpi_f08 modules: generated by",
         "! tools/gen_fortran.py; do not edit.", "module mpi_sizeofs", "  implicit none",
         "  private", "  public :: mpi_sizeof", "  interface mpi_sizeof",
         "    module procedure " + ", &\n        ".join(lists), "  end interface", "contains"]
        + body + ["end module mpi_sizeofs"]) + "\n"


# ---------------------------------------------------------------- mpi_f08

# Handle kinds by the object bits (26-29) of MPICH's encoding (mpi.h).
HANDLE_OBJECTS = {1: "MPI_Comm", 2: "MPI_Group", 3: "MPI_Datatype", 5: "MPI_Errhandler",
                  6: "MPI_Op", 7: "MPI_Info", 8: "MPI_Win", 11: "MPI_Request"}
HANDLE_TYPES = sorted(set(HANDLE_OBJECTS.values()) | {"MPI_Message", "MPI_File"})


def f08_handle_type(name, val):
    if name.startswith("MPI_MESSAGE_"):
        return "MPI_Message"
    if name == "MPI_FILE_NULL":     # MPI_File is a pointer in C, 0 in Fortran
        return "MPI_File"
    if val & 0xffffffff < 0x04000000 or name.startswith("MPI_COMBINER"):
        return None
    return HANDLE_OBJECTS.get(((val & 0xffffffff) >> 26) & 0xF)


def f08_decl(line, private):
    """One declaration of the standard's mpi_f08 signature, as the public
    procedure (private=False) or the interface of the C binding it calls
    (private=True) declares it. Buffers are assumed-size with gfortran's
    NO_ARG_CHECK (MPI_SUBARRAYS_SUPPORTED is .FALSE.); callbacks EXTERNAL."""
    t, names = [x.strip() for x in line.split("::")]
    attrs = [a.strip() for a in re.split(r",(?![^(]*\))", t)]
    out = []
    if attrs[0] == "TYPE(*)":
        out += [f"!GCC$ ATTRIBUTES NO_ARG_CHECK :: {names}"]
        attrs = ["type(*)", "dimension(*)"] + [a for a in attrs[1:] if a != "DIMENSION(..)"]
    elif attrs[0].startswith("PROCEDURE("):
        return [f"external :: {names}"]
    elif attrs[0].startswith("CHARACTER("):
        attrs[0] = "character(len=*)"
    if private:
        attrs = [a for a in attrs if a != "OPTIONAL"]
    # One declaration a name: some lists are longer than a line.
    return out + [", ".join(attrs) + " :: " + n.strip()
                  for n in re.split(r",(?![^(]*\))", names)]


def f08_procedure(proc, prefix=""):
    """The mpi_f08 procedure MPI_X (PMPI_X with prefix "P") and the interface
    of the C binding mpi_x_ it calls."""
    lines = str(proc.express.f08).splitlines()
    m = re.fullmatch(r"(.*?)\s*(MPI_\w+)\((.*)\)", lines[0].strip())
    ftype, name, args = m.group(1), m.group(2), m.group(3)
    cname = name.lower() + "_"
    name = prefix + name
    decls = [l.strip() for l in lines[1:] if "::" in l and not l.strip().startswith("USE")]
    arglist = [a.strip() for a in args.split(",") if a.strip()]
    has_ierr = "ierror" in arglist
    wrap = lambda h: h if len(h) < 110 else h[:h.rindex(", ", 0, 100) + 1] + " &\n      " + \
        h[h.rindex(", ", 0, 100) + 2:]
    if ftype:
        ft = ftype.lower()
        iface = [f"function {cname}({', '.join(arglist)}) result(r)", "  import", f"  {ft} :: r"] + \
                ["  " + d for l in decls for d in f08_decl(l, True)] + [f"end function {cname}"]
        body = [f"{ft} function {name}({args})"] + ["  " + d for l in decls for d in f08_decl(l, False)]
        body += [f"  {name} = {cname}({', '.join(arglist)})", f"end function {name}"]
        return body, iface
    iface = [wrap(f"subroutine {cname}({', '.join(arglist)})"), "  import"] + \
            ["  " + d for l in decls for d in f08_decl(l, True)] + [f"end subroutine {cname}"]
    body = [wrap(f"subroutine {name}({args})")] + ["  " + d for l in decls for d in f08_decl(l, False)]
    if has_ierr:
        call = [a if a != "ierror" else "ierror_" for a in arglist]
        body += ["  integer :: ierror_", wrap(f"  call {cname}({', '.join(call)})"),
                 "  if (present(ierror)) ierror = ierror_"]
    else:
        body += [wrap(f"  call {cname}({', '.join(arglist)})")]
    body.append(f"end subroutine {name}")
    return body, iface


def mpi_f08_module(f, bound):
    """The `mpi_f08` module over the same C bindings: handles are one-integer
    BIND(C) types and a status is MPI_Status's five integers, so each
    procedure passes its arguments on unchanged (the binding's two-underscore
    alias, mpi_x__, is its Fortran name mpi_x_); ierror is optional."""
    import pympistandard as std
    std.use_api_version(1)
    out = ["! vmpi's `mpi_f08` module: generated by tools/gen_fortran.py; do not edit.",
           "module mpi_f08", "  use, intrinsic :: iso_c_binding, only: c_ptr", "  use mpi_sizeofs",
           "  implicit none", "  private :: c_ptr"]
    for t in HANDLE_TYPES:
        out += [f"  type, bind(C) :: {t}", "    integer :: MPI_VAL", f"  end type {t}"]
    out += ["  type, bind(C) :: MPI_Status",
            "    integer :: count_lo, count_hi_and_cancelled, MPI_SOURCE, MPI_TAG, MPI_ERROR",
            "  end type MPI_Status"]
    for name, val in KINDS:
        out.append(f"  integer, parameter :: {name} = {val}")
    for name in sorted(f):
        if name in ("MPI_SOURCE", "MPI_TAG", "MPI_ERROR"):
            continue
        t = f08_handle_type(name, f[name])
        k = f"(kind={WIDE[name]})" if name in WIDE else ""
        out.append(f"  type({t}), parameter :: {name} = {t}({f[name]})" if t else
                   f"  integer{k}, parameter :: {name} = {f[name]}")
    out += ["  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.",
            "  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.",
            "  ! The sentinels: mpif.h's COMMON blocks (api/fortran/fortran.h).",
            "  integer :: MPI_BOTTOM, MPI_IN_PLACE, MPI_ERRCODES_IGNORE(1)",
            "  integer :: MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)",
            "  type(MPI_Status) :: MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE(1)",
            "  character(len=1) :: MPI_ARGVS_NULL(1, 1), MPI_ARGV_NULL(1)",
            "  common /mpifcmb5/ MPI_UNWEIGHTED", "  common /mpifcmb9/ MPI_WEIGHTS_EMPTY",
            "  common /mpipriv1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE",
            "  common /mpipriv2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE",
            "  common /mpiprivc/ MPI_ARGVS_NULL, MPI_ARGV_NULL",
            "  save /mpifcmb5/, /mpifcmb9/, /mpipriv1/, /mpipriv2/, /mpiprivc/",
            "  ! The predefined attribute callbacks (api/fortran/callbacks.c)."]
    out += ["  external :: " + n for n in FORTRAN_ONLY if "_FN" in n]
    ops = []
    for t in HANDLE_TYPES:
        ops += ["  interface operator(==)", f"    module procedure {t.lower()}_eq", "  end interface",
                "  interface operator(/=)", f"    module procedure {t.lower()}_ne", "  end interface"]
    out += ops
    bodies, ifaces = [], []
    for name in bound:
        proc = std.PROCEDURES.get(name.lower())
        if proc is None or not proc._parseset["attributes"]["f08_expressible"]:
            continue
        b, i = f08_procedure(proc)
        pb, _ = f08_procedure(proc, "P")   # the profiling twin PMPI_X
        bodies += [""] + b + [""] + pb
        ifaces += i
    out += ["  interface"] + ["    " + l for l in ifaces] + ["  end interface"]
    out += ["  private :: " + n.lower() + "_" for n in bound
            if std.PROCEDURES.get(n.lower()) is not None
            and std.PROCEDURES[n.lower()]._parseset["attributes"]["f08_expressible"]]
    out.append("contains")
    for t in HANDLE_TYPES:
        for op, fn in (("==", "eq"), ("/=", "ne")):
            out += [f"  elemental logical function {t.lower()}_{fn}(a, b)",
                    f"    type({t}), intent(in) :: a, b",
                    f"    {t.lower()}_{fn} = a%MPI_VAL {op} b%MPI_VAL",
                    f"  end function {t.lower()}_{fn}"]
    out += ["  " + l if l else "" for l in bodies]
    out.append("end module mpi_f08")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- bindings

def std_params(proc):
    ps = [q for q in proc._parseset["parameters"] if not q["large_only"]]
    cps = [q for q in ps if "c_parameter" not in q["suppress"] and q["kind"] != "VARARGS"]
    fps = [q for q in ps if "f90_parameter" not in q["suppress"] and q["kind"] != "VARARGS"]
    return cps, fps


def base_type(ctype):
    return ctype.replace("const ", "").replace("*", "").strip()


def binding(ret, name, cparams, proc):
    """The C text of one Fortran binding."""
    cps, fps = std_params(proc)
    if len(cps) != len(cparams):
        raise SystemExit(f"{name}: mpi.h has {len(cparams)} parameters, the standard {len(cps)}")
    cmap = {q["name"]: c for q, c in zip(cps, cparams)}
    args = {q["name"]: "NULL" for q in cps}   # parameters Fortran lacks (argc, argv)
    fdecl, hidden, pre, post, strs = [], [], [], [], []
    has_ierr = False
    for q in fps:
        n, k, d = q["name"], q["kind"], q["param_direction"]
        if k == "ERROR_CODE" and "c_parameter" in q["suppress"]:
            fdecl.append(f"MPI_Fint *{n}")
            has_ierr = True
            continue
        ctype, cname, is_arr = cmap[n]
        arr = is_arr or "*" in ctype
        if k == "STRING":
            fdecl.append(f"char *{n}")
            hidden.append(f"size_t {n}_len")
            strs.append(f"c_{n}")
            if d == "in":
                lead = int(name.startswith("MPI_Info_"))
                pre.append(f"char *c_{n} = vf_str_in({n}, {n}_len, {lead});")
                post.append(f"free(c_{n});")
            else:
                pre.append(f"char *c_{n} = vf_str_tmp({n}_len);")
                found = " && c_flag" if any(p["name"] == "flag" for p in fps) else ""
                post.append(f"vf_str_out({n}, {n}_len, c_{n}, rc == MPI_SUCCESS{found});")
            args[n] = f"c_{n}"
        elif k == "INFO_VALUE_LENGTH" and d == "in":
            fdecl.append(f"MPI_Fint *{n}")
            args[n] = f"*{n} < (MPI_Fint)value_len ? *{n} : (MPI_Fint)value_len"
        elif k == "BUFFER":
            fdecl.append(f"void *{n}")
            args[n] = f"vf_buf({n})"
        elif k in ("C_BUFFER", "C_BUFFER2"):
            fdecl.append(f"void *{n}")
            args[n] = n
        elif k == "STATUS":
            fdecl.append(f"MPI_Fint *{n}")
            args[n] = f"vf_statuses({n})" if is_arr or q["length"] else f"vf_status({n})"
        elif k == "WEIGHT":
            fdecl.append(f"MPI_Fint *{n}")
            args[n] = f"vf_weights({n})"
        elif k == "LOGICAL" and not arr:
            fdecl.append(f"MPI_Fint *{n}")
            args[n] = f"*{n} != 0"
        elif k == "LOGICAL" and d == "in":
            fdecl.append(f"MPI_Fint *{n}")
            args[n] = n
        elif k == "LOGICAL":
            fdecl.append(f"MPI_Fint *{n}")
            if q["length"]:
                args[n] = n
                post.insert(0, f"if (rc == MPI_SUCCESS)\n        vf_logicals({n}, *{q['length']});")
            else:
                pre.append(f"int c_{n} = 0;")
                args[n] = f"&c_{n}"
                post.insert(0, f"*{n} = vf_logical(c_{n});")
        elif k == "INDEX" and d == "out" and re.match(r"MPI_(Wait|Test)(any|some)$", name):
            # Request indices count from 1 in Fortran.
            fdecl.append(f"int *{n}")
            args[n] = n
            count = next((p["name"] for p in fps if p["kind"] == "ARRAY_LENGTH"
                          and p["param_direction"] == "out"), None)
            post.insert(0, f"if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)\n        vf_indices({n}, "
                           f"{'*' + count if is_arr or q['length'] else '1'});")
        elif k == "ATTRIBUTE_VAL" and d == "in":
            fdecl.append(f"MPI_Aint *{n}")
            args[n] = f"(void *)*{n}"
        elif k in ("FUNCTION", "POLYFUNCTION"):
            # Op_create's and the error handlers' callbacks take pointers
            # only, so a Fortran procedure has the C signature.
            fdecl.append(f"{ctype} {n}")
            args[n] = n
        elif base_type(ctype) == "MPI_File":
            # A pointer in C, an INTEGER in Fortran (MPI_File_c2f/f2c).
            fdecl.append(f"MPI_Fint *{n}")
            if "*" in ctype:
                pre.append(f"MPI_File c_{n} = MPI_File_f2c(*{n});")
                args[n] = f"&c_{n}"
                post.insert(0, f"*{n} = MPI_File_c2f(c_{n});")
            else:
                args[n] = f"MPI_File_f2c(*{n})"
        elif is_arr.startswith("[]["):     # int ranges[][3]
            fdecl.append(f"{base_type(ctype)} (*{n}){is_arr[2:]}")
            args[n] = n
        elif arr:
            fdecl.append(f"{base_type(ctype)} *{n}")
            args[n] = n
        else:
            fdecl.append(f"{base_type(ctype)} *{n}")
            args[n] = f"*{n}"
    lo = name[4:].lower()
    sig = ", ".join(fdecl + hidden) or "void"
    call = f"{name}({', '.join(args[q['name']] for q in cps)})"
    out = []
    fret = {"int": "void"}.get(ret, ret)
    out.append(f"VF_EXPORT {fret} pmpi_{lo}_({sig});")
    out.append(f"{fret} pmpi_{lo}_({sig})\n{{")
    body = ["    " + s for s in pre]
    if strs:
        cond = " || ".join(f"!{s}" for s in strs)
        frees = "".join(f"        free({s});\n" for s in strs) if len(strs) > 1 else ""
        body.append(f"    if ({cond}) {{\n{frees}        *ierror = vf_nomem();\n"
                    f"        return;\n    }}")
    if ret != "int":
        body.append(f"    return {call};")
    elif has_ierr and not post:
        body.append(f"    *ierror = {call};")
    elif has_ierr or post:
        body.append(f"    int rc = {call};")
        body += ["    " + s for s in post]
        if has_ierr:
            body.append("    *ierror = rc;")
    else:
        body.append(f"    {call};")
    out += body
    out.append("}")
    out.append(f"VF_NAMES({lo}, {lo.upper()})")
    return "\n".join(out) + "\n"


def chapter_of(name):
    sys.path.insert(0, str(ROOT / "tools"))
    import api_coverage
    for title, pattern, _ in api_coverage.CHAPTERS:
        if re.search(pattern, name, re.I):
            return re.sub(r"[^a-z0-9]+", "_", title.replace("/", "").split("(")[0].strip().lower()).strip("_")
    return "other"


def generate_bindings(decls):
    import pympistandard as std
    std.use_api_version(1)
    files, manifest = {}, []
    for ret, name, params in decls:
        if name in HAND:
            manifest.append(f"{name} hand")
            continue
        proc = std.PROCEDURES.get(name.lower())
        if proc is None:
            raise SystemExit(f"{name}: not in the standard and not bound by hand")
        if not proc._parseset["attributes"]["f90_expressible"]:
            manifest.append(f"{name} c-only")
            continue
        f = f"f_{chapter_of(name)}.c"
        files.setdefault(f, []).append(binding(ret, name, params, proc))
        manifest.append(f"{name} {f}")
    out = {}
    for f, parts in files.items():
        out[f] = ("/* Generated by tools/gen_fortran.py from include/mpi.h and the MPI\n"
                  " * Forum's standard (pympistandard); do not edit. */\n"
                  '#include "fortran.h"\n\n#include <stdlib.h>\n\n' + "\n".join(parts))
    return out, manifest


# ---------------------------------------------------------------- manifest


def inputs_hash(text):
    """What the output depends on: mpi.h's declarations and numbers, this
    script, the hand-written binding list; not mpi.h's comments."""
    h = hashlib.sha256()
    h.update(repr(header_decls(text)).encode())
    h.update(repr(sorted(header_consts(text).items())).encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def file_hash(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def put(path, text):
    """Write a file only when its text changes, so builds do not redo it."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write():
    text = header_text()
    decls = header_decls(text)
    consts = fortran_consts(header_consts(text))
    put(MPIF, mpif_h(consts))
    files, manifest = generate_bindings(decls)
    bound = sorted(m.split()[0] for m in manifest if not m.endswith("c-only"))
    put(MODULE, mpi_module(consts, bound))
    put(MODULE08, mpi_f08_module(consts, bound))
    put(SIZEOFS, mpi_sizeofs_module())
    for old in FDIR.glob("f_*.c"):
        if old.name not in files:
            old.unlink()
    for f, t in files.items():
        put(FDIR / f, t)
    generated = [MPIF, MODULE, MODULE08, SIZEOFS] + [FDIR / f for f in sorted(files)]
    lines = ["# Written by tools/gen_fortran.py; do not edit. Each C function of",
             "# mpi.h: the file of its Fortran binding, `hand`, or `c-only`.",
             f"inputs {inputs_hash(text)}"]
    lines += [f"file {p.relative_to(ROOT)} {file_hash(p)}" for p in generated]
    lines += sorted(manifest)
    put(MANIFEST, "\n".join(lines) + "\n")
    print(f"gen_fortran: {len(manifest)} functions, {len(files)} binding files")


def spellings(name):
    lo, up = name[4:].lower(), name[4:].upper()
    return [f"{p}{lo}{s}" for p in ("mpi_", "pmpi_") for s in ("", "_", "__")] + \
           [f"MPI_{up}", f"PMPI_{up}"]


def check(lib):
    text = header_text()
    errors = []
    lines = MANIFEST.read_text().splitlines()
    entries = dict(l.split(" ", 1) for l in lines if l.startswith("MPI_"))
    for l in lines:
        if l.startswith("inputs ") and l.split()[1] != inputs_hash(text):
            errors.append("include/mpi.h or tools/gen_fortran.py changed since the Fortran "
                          "files were generated: re-run tools/gen_fortran.py")
        if l.startswith("file "):
            _, rel, h = l.split()
            if not (ROOT / rel).exists() or file_hash(ROOT / rel) != h:
                errors.append(f"{rel} is not what tools/gen_fortran.py wrote (edited by hand?)")
    for _, name, _ in header_decls(text):
        if name not in entries:
            errors.append(f"{name}: declared in mpi.h or mpio.h but has no Fortran binding")
    if lib:
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                             text=True, check=True).stdout
        syms = {l.split()[-1] for l in out.splitlines() if l.strip()}
        bound = [n for n, where in entries.items() if where != "c-only"] + FORTRAN_ONLY
        for name in bound:
            missing = [s for s in spellings(name) if s not in syms]
            if missing:
                errors.append(f"{name}: {lib} does not export {' '.join(missing)}")
    for e in errors:
        print(e)
    return 1 if errors else 0


def mpif_values(text):
    """{NAME: value} of an mpif.h's PARAMETER statements."""
    raw = dict(re.findall(r"PARAMETER\s*\((\w+)\s*=\s*([^)]+)\)", text, re.I))
    out = {}
    for name, v in raw.items():
        v = raw.get(v.strip(), v).strip()
        if re.fullmatch(r"-?\d+(\s*-\s*1)?", v):
            out[name.upper()] = eval(v)
        elif v.upper() in (".TRUE.", ".FALSE."):
            out[name.upper()] = v.upper()
    return out


def compare_mpich(path):
    ours, theirs = mpif_values(MPIF.read_text()), mpif_values(Path(path).read_text())
    # vmpi says it is MPI-3.1; MPICH 4 says 4.0.
    bad = [f"{n}: vmpi {ours[n]}, MPICH {theirs[n]}" for n in sorted(ours)
           if n in theirs and ours[n] != theirs[n] and n not in ("MPI_VERSION", "MPI_SUBVERSION")]
    only = sorted(set(theirs) - set(ours))
    print(f"mpif.h: {len(set(ours) & set(theirs))} numbers as MPICH's; "
          f"only in MPICH's: {' '.join(only) or 'none'}")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--compare-mpich":
        sys.exit(compare_mpich(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2] if len(sys.argv) > 2 else None))
    write()
