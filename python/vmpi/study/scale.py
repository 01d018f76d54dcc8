"""``vmpi study --scale``: how collectives and memory grow with the ranks.

The grid is ranks x VMs (default 4, 16, 64 ranks in 1, 4, 16 VMs of one
host, only where the VMs divide the ranks).  Every rank count is its own
benchmark of kind ``scale`` (``scale-bcast-r16``, ``scale-mem-r16``), so
the study's grid, runner, results.jsonl and ``--resume`` serve it as they
are.  MPICH and Open MPI have no VMs: they run the same rank counts on the
machine (placement ``vm``), as shipped and with their yielding settings
(every point here has more ranks than a 2-core machine's cores).  Memory is
vmpi's only: bench/footprint's shared and private KiB per rank.

Iterations shrink with the ranks: a 64-rank job on 2 cores spends most of
its time waiting for the scheduler, and one iteration there already holds
64 ranks' worth of calls.
"""

from __future__ import annotations

import html
from collections import defaultdict

from . import analysis
from .analysis import Key
from .spec import LIBRARIES, Bench, Placement, Study, StudyError, ranks_on_cores

RANKS = (4, 16, 64)
VMS = (1, 4, 16)
COLLECTIVES = ("bcast", "allreduce", "allgather", "alltoall", "barrier")
SIZES = (8, 65536)
REPS = 3


def iterations(ranks: int) -> tuple[int, int]:
    """Measured and warm-up iterations per size at ``ranks`` ranks."""
    it = max(3, 200 // ranks)
    return it, max(1, it // 10)


def timeout(ranks: int) -> float:
    return 20.0 + 1.5 * ranks


def placement_name(vms: int) -> str:
    return "vm" if vms == 1 else f"{vms}vm"


def placements(ranks: int, vms: tuple[int, ...]) -> tuple[str, ...]:
    """One VM (the baseline, and where MPICH and Open MPI run) and the VM
    counts that hold ``ranks`` evenly."""
    return tuple(placement_name(v) for v in sorted({1, *vms}) if v <= ranks and ranks % v == 0)


def bench_name(what: str, ranks: int) -> str:
    return f"scale-{what}-r{ranks}"


def scale_study(ranks: tuple[int, ...] = RANKS, vms: tuple[int, ...] = VMS,
                reps: int = REPS, libraries: tuple[str, ...] = LIBRARIES) -> Study:
    if not ranks or any(r < 2 for r in ranks):
        raise StudyError(f"--scale-ranks {','.join(map(str, ranks))}: want rank counts >= 2")
    if not vms or any(v < 1 or v > 64 for v in vms):
        raise StudyError(f"--scale-vms {','.join(map(str, vms))}: want VM counts 1..64")
    benches, used = [], []
    for n in sorted(set(ranks)):
        pls = placements(n, vms)
        used += [p for p in pls if p not in used]
        it, warm = iterations(n)
        sizes = ",".join(map(str, SIZES))
        for coll in COLLECTIVES:
            benches.append(Bench(bench_name(coll, n), "coll",
                                 f"{coll} --sizes {sizes} -i {it} -x {warm}", "scale",
                                 "latency", ranks=n, placements=pls,
                                 headline=0 if coll == "barrier" else SIZES[0],
                                 timeout=timeout(n)))
        benches.append(Bench(bench_name("mem", n), "footprint", "", "scale", "memory",
                             ranks=n, libraries=("vmpi",), placements=pls,
                             timeout=timeout(n)))
    # vmpi runs its default channels only: the placements are all one host's
    study = Study(name="scale", reps=reps, libraries=libraries, placements=tuple(used),
                  policies=("aware",), benches=benches)
    study.check()
    return study


def _vms(pl: str) -> int:
    return Placement.parse(pl).vms


def _line_name(lib: str, pl: str, policy: str) -> str:
    name = {"vmpi": "vmpi", "mpich": "MPICH", "openmpi": "Open MPI"}[lib]
    if policy == "yield":
        name += " (yielding)"
    return f"{name} · {Placement.parse(pl).label}"


def _points(table: dict[Key, dict], kind_of):
    """{(what, series, x): {(library, placement, policy): {ranks: row}}} of the
    scale benchmarks whose name kind_of accepts."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for k, row in table.items():
        if row["kind"] != "scale" or not kind_of(k.bench):
            continue
        what = k.bench.split("-")[1]
        out[(what, k.series, k.x)][(k.library, k.placement, k.policy)][k.ranks] = row
    return out


def _is_mem(bench: str) -> bool:
    return bench.startswith("scale-mem-")


def _cores_text(table: dict[Key, dict], cores: int) -> str:
    rs = sorted({k.ranks for k, r in table.items() if r["kind"] == "scale"})
    if len(rs) == 1:
        return ranks_on_cores(rs[0], cores)
    return f"{', '.join(map(str, rs[:-1]))} and {rs[-1]} ranks on {cores} cores"


def figures(figs, table: dict[Key, dict]) -> list[dict]:
    """Time vs ranks (a panel per collective and size, a line per library and
    placement) and memory vs ranks (shared and private, a line per VM
    count), drawn with the report's Figures; the figures made."""
    from .report import _style
    made = len(figs.made)
    plt = figs.plt
    cores_txt = _cores_text(table, figs.cores)
    times = _points(table, lambda b: not _is_mem(b))
    if times:
        vm_counts = sorted({_vms(pl) for d in times.values() for _, pl, _ in d})
        panels = sorted(times, key=_order)
        cols = min(4, len(panels))
        rows = (len(panels) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False)
        for ax in axes.flat[len(panels):]:
            ax.set_visible(False)
        for ax, (what, series, x) in zip(axes.flat, panels):
            lines = sorted(times[(what, series, x)], key=_line_order)
            for lib, pl, pol in lines:
                pts = sorted(times[(what, series, x)][(lib, pl, pol)].items())
                st = _style(lib, pol)
                if lib == "vmpi":  # the VM counts told apart by line style
                    st["linestyle"] = ("-", "--", ":", (0, (6, 2, 1, 2)))[
                        min(vm_counts.index(_vms(pl)), 3)]
                st = {k: v for k, v in st.items() if k not in ("capsize", "elinewidth")}
                ax.plot([p[0] for p in pts], [p[1]["median"] for p in pts],
                        label=_line_name(lib, pl, pol), **st)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            rs = sorted({r for d in times[(what, series, x)].values() for r in d})
            ax.set_xticks(rs)
            ax.set_xticklabels([str(r) for r in rs])
            ax.set_title(f"MPI_{series.capitalize()}"
                         + ("" if what == "barrier" else f", {analysis.size_label(x)}"),
                         fontsize=9)
            ax.set_xlabel("ranks", fontsize=8)
            ax.set_ylabel("time per operation (µs)", fontsize=8)
            ax.grid(True, which="major", alpha=0.3)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=7, loc="lower center",
                   ncol=min(4, len(labels)), framealpha=0.85)
        title = f"Collective time vs ranks, {cores_txt}"
        fig.suptitle(title, fontsize=11)
        fig.tight_layout(rect=(0, 0.06 + 0.02 * ((len(labels) + 3) // 4), 1, 0.95))
        figs._save(fig, "scale-time", title, _time_reading(times, cores_txt))
    mem = _points(table, _is_mem)
    if mem:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), squeeze=False)
        for ax, series in zip(axes[0], ("shared", "private")):
            conf = defaultdict(dict)
            for (_, s, x), d in mem.items():
                if s == series:
                    for (lib, pl, pol), byr in d.items():
                        conf[pl].update({r: row["median"] for r, row in byr.items()})
            for pl in sorted(conf, key=_vms):
                pts = sorted(conf[pl].items())
                v = _vms(pl)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3.5,
                        label=f"{v} VM{'s' if v > 1 else ''}, 1 host")
            rs = sorted({r for d in conf.values() for r in d})
            ax.set_xscale("log", base=2)
            ax.set_xticks(rs)
            ax.set_xticklabels([str(r) for r in rs])
            ax.set_xlabel("ranks")
            ax.set_ylabel(f"{series} memory per rank (KiB)")
            ax.set_ylim(bottom=0)
            ax.set_title(f"{series} (Pss_{'Shmem' if series == 'shared' else 'Anon'})",
                         fontsize=10)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        title = f"vmpi memory per rank vs ranks, {cores_txt}"
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        figs._save(fig, "scale-memory", title, _mem_reading(mem, cores_txt))
    return figs.made[made:]


def _time_reading(times, cores_txt: str) -> str:
    key = next((p for p in sorted(times, key=_order) if p[0] == "allreduce"),
               min(times, key=_order))
    byline = times[key]
    parts = []
    for conf in sorted(byline, key=_line_order):
        byr = byline[conf]
        rs = sorted(byr)
        if len(rs) > 1:
            a, b = byr[rs[0]]["median"], byr[rs[-1]]["median"]
            parts.append(f"{_line_name(*conf)} {analysis._num(a)} → {analysis._num(b)} µs "
                         f"({rs[0]} → {rs[-1]} ranks)")
    what = f"MPI_{key[1].capitalize()}" + ("" if key[0] == "barrier"
                                           else f" {analysis.size_label(key[2])}")
    return f"{cores_txt}. {what}: " + ("; ".join(parts) if parts else "one rank count only") \
        + "."


def _mem_reading(mem, cores_txt: str) -> str:
    parts = []
    for (_, series, x), d in sorted(mem.items()):
        if series != "shared":
            continue
        for (lib, pl, pol), byr in sorted(d.items(), key=lambda cd: _vms(cd[0][1])):
            parts.append(f"{x} ranks in {Placement.parse(pl).label}: "
                         f"{byr[x]['median']:.0f} KiB shared")
    return f"{cores_txt}. " + "; ".join(parts) + "."


def _order(point):
    what, _, x = point
    return (COLLECTIVES.index(what) if what in COLLECTIVES else 99, x)


def _line_order(conf):
    lib, pl, pol = conf
    return (LIBRARIES.index(lib) if lib in LIBRARIES else 99, _vms(pl), pol)


def time_rows(table: dict[Key, dict], cores: int) -> tuple[list[str], list[list[str]]]:
    """The time table: a row per collective, size and line, a column per rank count."""
    from .report import _fmt
    times = _points(table, lambda b: not _is_mem(b))
    ranks = sorted({r for d in times.values() for byr in d.values() for r in byr})
    rows = []
    for point in sorted(times, key=_order):
        what, series, x = point
        for conf in sorted(times[point], key=_line_order):
            byr = times[point][conf]
            rows.append([f"MPI_{series.capitalize()}",
                         "-" if what == "barrier" else analysis.size_label(x),
                         _line_name(*conf)]
                        + [_fmt(byr[r]["median"], "us") if r in byr else "-" for r in ranks])
    return (["collective", "size", "library · placement"]
            + [ranks_on_cores(r, cores) for r in ranks], rows)


def mem_rows(table: dict[Key, dict], cores: int) -> tuple[list[str], list[list[str]]]:
    """The memory table: a row per rank count and VM count."""
    rows = []
    for k in sorted((k for k, r in table.items() if r["kind"] == "scale"
                     and _is_mem(k.bench) and k.series == "shared"),
                    key=lambda k: (k.ranks, _vms(k.placement))):
        priv = table.get(k._replace(series="private"))
        rows.append([ranks_on_cores(k.ranks, cores), str(_vms(k.placement)),
                     f"{table[k]['median']:.0f}", f"{priv['median']:.0f}" if priv else "-"])
    return ["ranks on cores", "VMs", "shared KiB", "private KiB"], rows


def format_text(table: dict[Key, dict], cores: int) -> str:
    """Both tables for the terminal."""
    out = []
    for title, left, (head, rows) in (("time per operation", 3, time_rows(table, cores)),
                                      ("vmpi memory per rank", 1, mem_rows(table, cores))):
        if not rows:
            continue
        cells = [head] + rows
        widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
        out.append(f"scale: {title}")
        out += ["  ".join(c.ljust(w) if i < left else c.rjust(w)
                          for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                for row in cells]
        out.append("")
    return "\n".join(out)


def section_html(table: dict[Key, dict], figures_made: list[dict], cores: int) -> list[str]:
    """The report's scale section: the figures and two tables."""
    keys = [k for k, r in table.items() if r["kind"] == "scale"]
    if not keys:
        return []
    from .report import _table_html
    cores_txt = _cores_text(table, cores)
    vms = sorted({_vms(k.placement) for k in keys if k.library == "vmpi"})
    over = all(k.ranks > cores for k in keys)
    h = ["<h2 id='scale'>Scaling: ranks and VMs</h2>",
         f"<p>{html.escape(cores_txt)}"
         + (": every job has more ranks than the machine has cores, so the times include "
            "waiting for the scheduler" if over else "") + ". "
         f"vmpi runs in {', '.join(map(str, vms))} emulated VM(s) of one host; MPICH and "
         "Open MPI have no VMs and run the same rank counts on the machine, as shipped and "
         "(with more ranks than cores) with their yielding settings. Medians over the "
         "repetitions; memory is vmpi's per rank (bench/footprint: proportional set size "
         "of shared memory and of private memory, KiB).</p>"]
    for fig in figures_made:
        h.append(f"<figure id='{fig['name']}'><h3>{html.escape(fig['title'])}</h3>"
                 f"<img alt='{html.escape(fig['title'])}' "
                 f"src='data:image/png;base64,{fig['png']}'>"
                 f"<figcaption>{html.escape(fig['reading'])}</figcaption></figure>")
    head, rows = time_rows(table, cores)
    if rows:
        h.append(f"<h3>Time per operation ({html.escape(cores_txt)})</h3>")
        h.append(_table_html(head, rows))
    head, rows = mem_rows(table, cores)
    if rows:
        h.append(f"<h3>vmpi memory per rank ({html.escape(cores_txt)})</h3>")
        h.append(_table_html(head, rows))
    return h
