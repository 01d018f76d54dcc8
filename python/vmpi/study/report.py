"""The report of a study: figures (matplotlib, PNG and SVG in figures/) and
report.html, self-contained (the PNGs are embedded), readable offline."""

from __future__ import annotations

import base64
import html
import io
import os

from . import analysis, scale, stats
from .analysis import Key
from .spec import YIELD_TEXT, Placement, Study, grid, machine_cores, oversubscribed, \
    ranks_on_cores

LIB_COLORS = {"vmpi": "#1b6ac9", "mpich": "#d1495b", "openmpi": "#edae49", "raw": "#555555"}
UNIT_LABEL = {"us": "µs", "MB/s": "MB/s", "1/s": "1/s", "KiB": "KiB"}


class ReportError(Exception):
    pass


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise ReportError("the report needs matplotlib (sh tools/deps.sh installs it in "
                          ".venv; or apt-get install python3-matplotlib); the results are "
                          "kept: make the report later with `vmpi study report DIR`") from None
    matplotlib.use("Agg")
    # SVG text stays text: searchable, smaller, selectable
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt
    return plt


def _style(lib: str, policy: str) -> dict:
    return {"color": LIB_COLORS.get(lib, "#333333"),
            "linestyle": {"unaware": "--", "yield": "-."}.get(policy, "-"),
            "marker": {"vmpi": "o", "mpich": "s", "openmpi": "^"}.get(lib, "x"),
            "markersize": 3.5, "linewidth": 1.4, "capsize": 2, "elinewidth": 0.8}


def _series_name(k: Key) -> str:
    name = {"vmpi": "vmpi", "mpich": "MPICH", "openmpi": "Open MPI"}[k.library]
    if k.policy == "yield":
        return f"{name} ({YIELD_TEXT[k.library]})"
    return name + (" (smp,ofi: virtual NIC)" if k.policy == "unaware" else "")


def _fmt(v: float, unit: str) -> str:
    return f"{analysis._num(v)} {UNIT_LABEL[unit]}"


def _size_axis(ax, xs) -> None:
    ax.set_xscale("log", base=2)
    ticks = [x for x in sorted(xs) if x > 0]
    if len(ticks) > 8:
        ticks = ticks[::max(1, len(ticks) // 6)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([analysis.size_label(t).replace(" ", "") for t in ticks],
                       rotation=45, fontsize=7)


def _ranks_text(ranks, cores: int) -> str:
    """"4 ranks on 2 cores" (or "2 and 4 ranks on 2 cores")."""
    rs = sorted(set(ranks))
    if len(rs) == 1:
        return ranks_on_cores(rs[0], cores)
    return f"{', '.join(map(str, rs[:-1]))} and {rs[-1]} ranks on {cores} cores"


class Figures:
    def __init__(self, table: dict[Key, dict], placements: list[str], outdir: str,
                 cores: int | None = None):
        self.plt = _plt()
        self.table = table
        self.placements = placements
        self.outdir = outdir
        self.cores = cores or machine_cores()
        os.makedirs(os.path.join(outdir, "figures"), exist_ok=True)
        self.made: list[dict] = []

    def _save(self, fig, name: str, title: str, reading: str) -> None:
        base = os.path.join(self.outdir, "figures", name)
        fig.savefig(base + ".svg")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        with open(base + ".png", "wb") as f:
            f.write(buf.getvalue())
        self.plt.close(fig)
        self.made.append({"name": name, "title": title, "reading": reading,
                          "png": base64.b64encode(buf.getvalue()).decode()})

    def _limit_lines(self, ax, pl: str, metric: str) -> None:
        remote = Placement.parse(pl).hosts > 1
        want = ("tcp_lat" if metric == "latency" else "tcp_bw") if remote else \
            ("clping" if metric == "latency" else "memcpy")
        pts = sorted((k.x, r["median"]) for k, r in self.table.items() if r["program"] == want)
        if not pts:
            return
        label = {"clping": "limit: cache-line ping-pong", "memcpy": "limit: memcpy, 1 core",
                 "tcp_lat": "limit: raw TCP", "tcp_bw": "limit: raw TCP"}[want]
        if len(pts) > 1:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color="#555555", linestyle=":",
                    linewidth=1.2, label=label)
        else:
            ax.axhline(pts[0][1], color="#555555", linestyle=":", linewidth=1.2, label=label)

    def series(self, bench: str, series: str, kind: str, metric: str, unit: str,
               title: str) -> None:
        """One panel per placement: value vs size for every library and policy,
        3-sigma jitter as error bars, the physical limit dotted."""
        keys = [k for k in self.table if k.bench == bench and k.series == series]
        pls = [p for p in self.placements if any(k.placement == p for k in keys)]
        if not pls:
            return
        plt = self.plt
        fig, axes = plt.subplots(1, len(pls), figsize=(4.3 * len(pls), 3.8), sharey=True,
                                 squeeze=False)
        for ax, pl in zip(axes[0], pls):
            confs = sorted({(k.library, k.policy, k.ranks) for k in keys if k.placement == pl},
                           key=lambda c: (list(LIB_COLORS).index(c[0]), c[1]))
            for lib, pol, ranks in confs:
                pts = sorted((k.x, self.table[k]) for k in keys
                             if (k.library, k.placement, k.policy, k.ranks) ==
                             (lib, pl, pol, ranks))
                xs = [p[0] for p in pts]
                ys = [p[1]["median"] for p in pts]
                # 3 sigma below the median would cross zero on a log axis.
                lo = [min(p[1]["jitter3s"], 0.9 * p[1]["median"]) for p in pts]
                hi = [p[1]["jitter3s"] for p in pts]
                name = _series_name(Key(bench, lib, pl, pol, ranks, series, 0))
                ax.errorbar(xs, ys, yerr=[lo, hi], label=name, **_style(lib, pol))
            if kind == "p2p":
                self._limit_lines(ax, pl, metric)
            _size_axis(ax, {k.x for k in keys})
            ax.set_yscale("log")
            ax.set_title(Placement.parse(pl).label, fontsize=10)
            ax.set_xlabel("message size")
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7, loc="best", framealpha=0.85)
        quantity = ("one-way latency" if kind == "p2p" else "time per operation") \
            if metric == "latency" else ("bandwidth" if metric == "bandwidth" else "rate")
        axes[0][0].set_ylabel(f"{quantity} ({UNIT_LABEL[unit]})")
        title = f"{title}, {_ranks_text((k.ranks for k in keys), self.cores)}"
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        self._save(fig, f"{bench}-{series}" if series != bench else bench, title,
                   self.reading(keys, pls, metric, unit))

    def reading(self, keys: list[Key], pls: list[str], metric: str, unit: str) -> str:
        some = self.table[keys[0]]
        xs = sorted({k.x for k in keys})
        x = some["headline"] if some["headline"] in xs else \
            (xs[0] if stats.lower_is_better(metric) else xs[-1])
        parts = []
        for pl in pls:
            at = sorted(((k, self.table[k]) for k in keys if k.placement == pl and k.x == x),
                        key=lambda kr: (list(LIB_COLORS).index(kr[0].library), kr[0].policy))
            if at:
                parts.append(Placement.parse(pl).label + ": " + ", ".join(
                    f"{_series_name(k)} {_fmt(r['median'], unit)}" for k, r in at))
        return (f"{_ranks_text((k.ranks for k in keys), self.cores)}. At "
                f"{analysis.size_label(x)}: " + "; ".join(parts) + ".")

    def locks(self, bench: str) -> None:
        keys = [k for k in self.table if k.bench == bench]
        if not keys:
            return
        plt = self.plt
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.8))
        locks = sorted({k.series for k in keys})
        cmap = plt.get_cmap("tab10")
        for i, lock in enumerate(locks):
            pts = sorted((k.x, self.table[k]) for k in keys if k.series == lock)
            xs = [p[0] for p in pts]
            a1.errorbar(xs, [p[1]["median"] for p in pts],
                        yerr=[[min(p[1]["jitter3s"], 0.9 * p[1]["median"]) for p in pts],
                              [p[1]["jitter3s"] for p in pts]],
                        label=lock, color=cmap(i), marker="o", markersize=3.5, capsize=2)
            a2.plot(xs, [p[1].get("jain", float("nan")) for p in pts], label=lock,
                    color=cmap(i), marker="o", markersize=3.5)
        for ax in (a1, a2):
            ax.set_xscale("log", base=2)
            xs = sorted({k.x for k in keys})
            ax.set_xticks(xs)
            ax.set_xticklabels([str(x) for x in xs])
            ax.set_xlabel("threads")
            ax.grid(True, alpha=0.3)
        ncpu = self.cores
        for ax in (a1, a2):
            ax.axvline(ncpu, color="#888888", linestyle=":", linewidth=1)
        a1.text(ncpu, 0.02, " more threads than cores", transform=a1.get_xaxis_transform(),
                fontsize=7, color="#666666")
        a1.set_yscale("log")
        a1.set_ylabel("throughput (acquisitions/s)")
        a2.set_ylabel("fairness (Jain's index, 1 = fair)")
        a2.set_ylim(0, 1.05)
        a1.legend(fontsize=7)
        threads = f"{min(k.x for k in keys)}-{max(k.x for k in keys)} threads on {ncpu} cores"
        fig.suptitle(f"Lock sweep: throughput and fairness, {threads}", fontsize=11)
        fig.tight_layout()
        tmax = max(k.x for k in keys)
        best = max(locks, key=lambda lk: self.table.get(
            next((k for k in keys if k.series == lk and k.x == tmax), keys[0]))["median"])
        top = next(k for k in keys if k.series == best and k.x == tmax)
        self._save(fig, bench, f"Lock sweep, {threads}", (
            f"At {tmax} threads on {ncpu} cores {best} keeps the most throughput "
            f"({self.table[top]['median']:.3g} acquisitions/s, Jain "
            f"{self.table[top].get('jain', float('nan')):.2f})."))

    def apps(self, benches: list[str]) -> None:
        """Application overheads: time against the same library in one VM."""
        bars = []
        for k, r in self.table.items():
            if k.bench in benches and k.placement != "vm":
                nat = analysis.point(self.table, k.bench, k.library, "vm",
                                     analysis.native_policy(k.library, k.policy),
                                     k.ranks, k.series, k.x)
                if nat is not None:
                    bars.append((f"{k.bench}\n{_series_name(k)}\n"
                                 f"{Placement.parse(k.placement).label}",
                                 stats.overhead_pct(r["median"], nat["median"], r["metric"]),
                                 k.library, k.ranks))
        if not bars:
            return
        bars.sort()
        plt = self.plt
        fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(bars)), 4))
        ax.bar(range(len(bars)), [b[1] for b in bars],
               color=[LIB_COLORS.get(b[2], "#333") for b in bars])
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], fontsize=7)
        ax.set_ylabel("overhead vs the same library in one VM (%)")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.grid(True, axis="y", alpha=0.3)
        title = f"Application overheads, {_ranks_text((b[3] for b in bars), self.cores)}"
        fig.suptitle(title, fontsize=11)
        fig.tight_layout()
        worst = max(bars, key=lambda b: b[1])
        self._save(fig, "apps", title,
                   f"Largest overhead: {worst[0].replace(chr(10), ' · ')} at {worst[1]:+.0f} %.")


FIG_TITLES = {"latency": "Point-to-point latency vs message size (3σ jitter bars)",
              "bw": "Bandwidth vs message size", "bibw": "Bidirectional bandwidth vs size",
              "mbw_mr": "Multi-pair bandwidth vs size", "multi_lat": "Multi-pair latency"}


def make_figures(table: dict[Key, dict], study: Study, outdir: str,
                 cores: int | None = None) -> list[dict]:
    figs = Figures(table, list(study.placements), outdir, cores)
    for b in study.benches:
        series = sorted({k.series for k in table if k.bench == b.name})
        if b.kind == "locks":
            figs.locks(b.name)
            continue
        if b.kind in ("limit", "app", "scale"):  # scale: scale.figures
            continue
        for s in series:
            unit = next(r["unit"] for k, r in table.items() if k.bench == b.name)
            if b.kind == "coll":
                title = f"MPI_{s.capitalize()} latency vs size"
            elif b.kind == "rma":
                title = f"One-sided {s.replace('_lat', '').replace('_bw', '')} " \
                    f"{'latency' if b.metric == 'latency' else 'bandwidth'} vs size " \
                    "(MPI_Win_allocate, flush)"
            else:
                title = FIG_TITLES.get(b.name, f"{b.name} vs message size")
            figs.series(b.name, s, b.kind, b.metric, unit, title)
    figs.apps([b.name for b in study.benches if b.kind == "app"])
    return figs.made


def _table_html(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    out = [f'<table class="{cls}"><thead><tr>']
    out += [f"<th>{html.escape(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#eef2f7}
td:first-child,td:nth-child(2),th{text-align:left}figure{margin:1.5em 0}
img{max-width:100%}figcaption{font-size:14px}code{background:#f3f3f3;padding:1px 3px}
.small{font-size:12px;color:#555}details{margin:.4em 0}"""


def _caveats(runs: list[dict], machine: dict) -> list[str]:
    """What a reader must know to read the numbers: oversubscribed runs, and
    limits the libraries beat."""
    out = []
    cores = machine.get("cores") or machine_cores()
    over = sorted({r["bench"] for r in runs if oversubscribed(r.get("ranks", 0), cores)
                   and r.get("library") != "raw" and r.get("kind") != "locks"})
    if over:
        yielded = any(r.get("policy") == "yield" for r in runs)
        out.append(f"<p class='small'><b>Oversubscribed:</b> {', '.join(over)} ran more "
                   f"ranks than the machine's {cores} cores. A library that busy-polls "
                   "then waits for whole scheduler time slices (milliseconds) whenever the "
                   "rank it waits for is not running. vmpi yields while it waits when "
                   "oversubscribed. "
                   + ("MPICH and Open MPI ran there both as shipped and with their own "
                      f"yielding setting (MPICH: {YIELD_TEXT['mpich']}, because its ch4 "
                      "device has no setting of its own: MPIR_CVAR_POLLS_BEFORE_YIELD is "
                      "read only by ch3, and ch4 calls sched_yield between polls only at "
                      "MPI_THREAD_MULTIPLE; Open MPI: "
                      f"{YIELD_TEXT['openmpi']}, which its mpirun already sets when it "
                      "sees more ranks than slots); the summary quotes the better of the "
                      "two and the table below shows both."
                      if yielded else
                      "MPICH and Open MPI ran only as shipped (this study's peer_policies "
                      "leave out their yielding settings); Debian's MPICH busy-polls as "
                      "shipped, so its times there measure that, not its communication "
                      "paths.") + "</p>")
    if any(r.get("sched") == "rr" for r in runs):
        out.append("<p class='small'><b>Round-robin:</b> the MPI runs of this study's grid "
                   "(not the NAS section, not QEMU guests) ran their ranks under SCHED_RR "
                   "(vmpirun --sched rr, also for MPICH in emulated VMs; the other "
                   "launchers under chrt -r 1): a rank that yields then waits until every "
                   "other rank of its core has had a turn. Under the kernel's default "
                   "scheduler a rank that yields often is put after the others, so the rank "
                   "that waited longest runs last (docs/PERFORMANCE.md, \"Oversubscribed: the "
                   "scheduler\").</p>")
    out.append("<p class='small'><b>of limit</b> above 100 % means the library beats the "
               "single-stream limit program: vmpi's shared-memory pipeline copies on both "
               "cores at once (memcpy measures one), and its network path keeps several "
               "sends in flight (the raw TCP stream is one socket).</p>")
    return out


def _both_settings(headline: list[dict]) -> list[str]:
    """The summary's oversubscribed rows with each peer's two settings."""
    rows = []
    for r in headline:
        if not any(f"{lib}_yield" in r for lib in ("mpich", "openmpi")):
            continue
        cells = analysis.headline_cells(r)[:3]
        for lib in ("mpich", "openmpi"):
            for pol in ("default", "yield"):
                v = r.get(f"{lib}_{pol}")
                cells.append(_fmt(v, r["unit"]) if v is not None else "-")
        rows.append(cells)
    if not rows:
        return []
    return ["<h3>MPICH and Open MPI with more ranks than cores: both settings</h3>",
            _table_html(["benchmark", "placement", "ranks on cores", "MPICH as shipped",
                         f"MPICH {YIELD_TEXT['mpich']}", "Open MPI as shipped",
                         f"Open MPI {YIELD_TEXT['openmpi']}"], rows)]


def write_html(path: str, study: Study, runs: list[dict], table: dict[Key, dict],
               figures: list[dict], headline: list[dict],
               scale_figures: list[dict] | None = None) -> None:
    ok = [r for r in runs if r.get("status") == "ok"]
    first = ok[0] if ok else (runs[0] if runs else {})
    versions = sorted({(r["library"], r.get("library_version", "")) for r in runs})
    machine = first.get("machine", {})
    cores = machine.get("cores") or machine_cores()
    configs, skipped = grid(study, cores)
    # the yielding settings that would change nothing go in one sentence
    calm = [c for c, why in skipped if c.policy == "yield" and "not oversubscribed" in why]
    skipped = [(c, why) for c, why in skipped if c not in calm]
    bad = [r for r in runs if r.get("status") != "ok"]
    expected = study.reps * len(configs)
    h = [f"<!doctype html><html><head><meta charset='utf-8'><title>vmpi study: "
         f"{html.escape(study.name)}</title><style>{CSS}</style></head><body>",
         f"<h1>vmpi study: {html.escape(study.name)}</h1>",
         f"<p class='small'>{len(ok)} of {expected} runs finished"
         f"{' (incomplete: resume with --resume)' if len(ok) < expected else ''}; "
         f"{study.reps} repetitions; machine {html.escape(machine.get('cpu', '?'))}, "
         f"{machine.get('cores', '?')} cores, Linux {html.escape(machine.get('kernel', '?'))}; "
         f"git {html.escape(first.get('git', '?'))}; first run "
         f"{html.escape(first.get('date', '?'))}.</p>",
         "<p class='small'>" + "; ".join(html.escape(f"{lib}: {v}") for lib, v in versions)
         + "</p>"]
    if headline:  # a --scale study has none: its section follows
        h += [
            "<h2>Summary</h2>",
            "<p>Medians over the repetitions at each benchmark's headline size. "
            "<b>overhead vs 1 VM</b>: the extra time of vmpi when the ranks sit in "
            "different VMs or hosts, against vmpi with both ranks in one VM (native); "
            "<b>vs smp,ofi</b>: vmpi's speedup over its locality-unaware policy (the virtual "
            "NIC between VMs); <b>MPICH overhead</b>: the same for Debian's MPICH; "
            "<b>vs MPICH / vs Open MPI</b>: vmpi's speedup over them at the same placement; "
            "<b>of limit</b>: the share of the physical limit (cache-line ping-pong or memcpy "
            "inside a host, raw TCP between hosts).</p>",
            _table_html(list(analysis.HEADLINE_COLUMNS),
                        [analysis.headline_cells(r, "†") for r in headline]),
            f"<p class='small'>{html.escape(analysis.headline_legend(headline, '†'))}</p>"]
    h += _caveats(runs, machine)
    h += _both_settings(headline)
    if figures:
        h.append("<h2>Figures</h2>")
    for fig in figures:
        h.append(f"<figure id='{fig['name']}'><h3>{html.escape(fig['title'])}</h3>"
                 f"<img alt='{html.escape(fig['title'])}' "
                 f"src='data:image/png;base64,{fig['png']}'>"
                 f"<figcaption>{html.escape(fig['reading'])} <span class='small'>"
                 f"(<a href='figures/{fig['name']}.png'>PNG</a>, "
                 f"<a href='figures/{fig['name']}.svg'>SVG</a>)</span></figcaption></figure>")
    h += scale.section_html(table, scale_figures or [], cores)
    if not any(b.kind in ("app", "scale") for b in study.benches):
        h.append("<p class='small'>Application overheads: this study runs no application "
                 "benchmark (kind = \"app\" in a study file adds them).</p>")
    limits = [(k, r) for k, r in table.items() if r["kind"] == "limit"]
    if limits:
        h.append("<h2>Physical limits</h2>")
        h.append(f"<p class='small'>Each on its own on the {cores} cores: cache-line "
                 "ping-pong between two processes on two cores, memcpy on one core, raw TCP "
                 "between two processes on two cores.</p>")
        h.append(_table_html(["limit", "size", "median", "3σ jitter", "reps"], [
            [k.bench, analysis.size_label(k.x), _fmt(r["median"], r["unit"]),
             _fmt(r["jitter3s"], r["unit"]), r["reps"]]
            for k, r in sorted(limits)]))
    if skipped or calm:
        h.append("<h2>Not run</h2>")
    if calm:
        h.append(f"<p class='small'>The yielding settings of MPICH and Open MPI ran only "
                 f"where the job had more ranks than the {cores} cores; in the other "
                 f"{len(calm)} configurations every rank keeps a core and yielding changes "
                 "nothing.</p>")
    if skipped:
        h.append(_table_html(["benchmark", "library", "placement", "policy", "why"], [
            [c.bench, c.library, Placement.parse(c.placement).label, c.policy, why]
            for c, why in skipped]))
    if bad:
        h.append("<h2>Failed runs</h2>")
        h.append(_table_html(["benchmark", "library", "placement", "policy", "rep", "status",
                              "error"], [
            [r["bench"], r["library"], r["placement"], r["policy"], r["rep"] + 1, r["status"],
             r.get("error", "")] for r in bad]))
    h.append("<h2>All results</h2><p class='small'>Per point: median of the repetitions, "
             "3σ jitter (three standard deviations of all iterations), p99 (99th percentile "
             "of all iterations), repetitions. Also in summary.csv; every run with its "
             "command in results.jsonl.</p>")
    for b in study.benches:
        keys = sorted(k for k in table if k.bench == b.name)
        if not keys:
            continue
        rows = [[analysis.config_label(k) + (f" · {ranks_on_cores(k.ranks, cores)}"
                                             if b.kind not in ("limit", "locks") else ""),
                 k.series, analysis.x_label(k.x, b.kind),
                 _fmt(table[k]["median"], table[k]["unit"]),
                 _fmt(table[k]["jitter3s"], table[k]["unit"]),
                 _fmt(table[k]["p99"], table[k]["unit"]), table[k]["reps"]] for k in keys]
        h.append(f"<details><summary>{html.escape(b.name)}: <code>{html.escape(b.program)} "
                 f"{html.escape(b.args)}</code></summary>")
        h.append(_table_html(["configuration", "series", "size", "median", "3σ jitter", "p99",
                              "reps"], rows))
        h.append("</details>")
    cmds = sorted({(r["bench"], r["command"]) for r in ok if r.get("rep") == 0})
    if cmds:
        h.append("<details><summary>Commands (first repetition)</summary><pre>"
                 + html.escape("\n".join(c for _, c in cmds)) + "</pre></details>")
    h.append("</body></html>")
    with open(path, "w") as f:
        f.write("\n".join(h))


def make_report(study: Study, out: str, runs: list[dict]) -> tuple[str, list[dict]]:
    """Figures, summary.csv and report.html from the runs; (path, headline rows)."""
    table = analysis.summarize_runs(runs)
    head = analysis.headline(table, list(study.placements))
    analysis.write_csv(table, os.path.join(out, "summary.csv"))
    cores = next(((r.get("machine") or {}).get("cores") for r in runs
                  if (r.get("machine") or {}).get("cores")), None)
    figures = make_figures(table, study, out, cores)
    scale_figs = []
    if any(r["kind"] == "scale" for r in table.values()):
        scale_figs = scale.figures(Figures(table, list(study.placements), out, cores), table)
    path = os.path.join(out, "report.html")
    write_html(path, study, runs, table, figures, head, scale_figs)
    return path, head
