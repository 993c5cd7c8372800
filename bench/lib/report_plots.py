"""bench/lib/report_plots.py
     The report's figures (matplotlib; none, with a note, when it is
     missing): one per workload family that names one in its descriptor,
     the average latency of the workloads the paper measured (Fig. 13), and
     the engine level with its model.
"""

import os

import report_common as common
from report_common import ENGINE_WORKLOADS, FAMILIES, ctitle, with_paper, wtitle


COLORS = {
    "heap": "tab:gray",
    "heap-tmpfs": "tab:brown",
    "heap-async": "tab:olive",
    "nvm-mcsi": "tab:red",
    "nvm-n2db": "tab:blue",
    "nvm-pisces": "goldenrod",
    "nvm-pomvcc": "teal",
    "nvm-mcsi-tmpfs": "tab:orange",
    "nvm-n2db-tmpfs": "tab:cyan",
    "nvm-mcsi-pagecache": "darkred",
    "nvm-n2db-pagecache": "navy",
    "heap-logical": "tab:pink",
    "nvm-mcsi-logical": "tab:purple",
    "nvm-n2db-logical": "tab:green",
}
MARKERS = {"heap": "s", "heap-tmpfs": "D", "heap-async": "v", "nvm-mcsi": "o", "nvm-n2db": "^",
           "nvm-pisces": "*", "nvm-pomvcc": "d",
           "nvm-mcsi-tmpfs": "o", "nvm-n2db-tmpfs": "^", "nvm-mcsi-pagecache": "h",
           "nvm-n2db-pagecache": "<", "heap-logical": "x",
           "nvm-mcsi-logical": "P", "nvm-n2db-logical": "X"}


def make_plots(out, res, eng, model):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["matplotlib is not installed (apt-get install python3-matplotlib): no plots."]
    made = []

    def style(c):
        base, _, delay = c.partition("@")
        return dict(color=COLORS.get(base, "black"), marker=MARKERS.get(base, "x"),
                    linestyle="--" if delay else "-", label=ctitle(c))

    def panel(ax, w, key, scale, ylabel):
        for c in res.contenders:
            xs, ys = res.series(w, c, key)
            if xs:
                ax.plot(xs, [y * scale for y in ys], **style(c))
        ax.set_title(wtitle(w), fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xticks(res.clients)
        ax.set_xticklabels([str(n) for n in res.clients])
        ax.set_xlabel("clients")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)

    # one figure per family, named in its descriptor: throughput against
    # clients per workload (and average latency when it asks for it)
    for f in FAMILIES:
        if not f.figure:
            continue
        wls = [w.name for w in f.workloads if w.name in res.workloads]
        if not wls:
            continue
        panels = [(w, "tps", 1e-3, "throughput (k tps)") for w in wls]
        if f.figure.get("latency"):
            panels = [p for w in wls for p in ((w, "tps", 1e-3, "throughput (k tps)"),
                                                (w, "lat_avg_ms", 1.0, "average latency (ms)"))]
        fig, axes = plt.subplots(1, len(panels), figsize=(max(4.75 * len(panels), 9.5), 3.9),
                                 squeeze=False)
        for ax, (w, key, scale, ylabel) in zip(axes[0], panels):
            panel(ax, w, key, scale, ylabel)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8)
        fig.suptitle(f.figure["title"], fontsize=11)
        fig.tight_layout(rect=(0, 0.1, 1, 0.95))
        fig.savefig(os.path.join(out, f.figure["file"]), dpi=110)
        plt.close(fig)
        made.append(f.figure["file"])
    # Fig. 13: average latency of the workloads the paper measured, in rows
    # of three panels
    wls = [w for w in with_paper(latency=True) if w in res.workloads]
    if wls:
        ncol = 3
        nrow = (len(wls) + ncol - 1) // ncol
        fig, axes = plt.subplots(nrow, ncol, figsize=(13.5, 3.7 * nrow + 0.6), squeeze=False)
        for i, w in enumerate(wls):
            panel(axes[i // ncol][i % ncol], w, "lat_avg_ms", 1.0, "average latency (ms)")
        for j in range(len(wls), nrow * ncol):
            axes[j // ncol][j % ncol].axis("off")
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8)
        fig.suptitle("Average transaction latency through SQL, retries included (cf. paper Fig. 13)",
                     fontsize=11)
        fig.tight_layout(rect=(0, 0.07, 1, 0.96))
        fig.savefig(os.path.join(out, "fig13_latency.png"), dpi=110)
        plt.close(fig)
        made.append("fig13_latency.png")
    if eng:
        wls = [w for w in ENGINE_WORKLOADS if any(r["workload"] == w for r in eng)]
        fig, axes = plt.subplots(1, len(wls), figsize=(4.4 * len(wls), 3.9), squeeze=False)
        for ax, w in zip(axes[0], wls):
            for mode, color, mk in (("mcsi", "tab:red", "o"), ("n2db", "tab:blue", "^")):
                pts = sorted((r["threads"], r["tps"]) for r in eng if r["workload"] == w and r["mode"] == mode)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] / 1e6 for p in pts], color=color, marker=mk,
                            label="%s measured" % mode.upper())
                m = model.get((w, mode))
                if m:
                    xs = list(range(1, 19))
                    ax.plot(xs, [m["x"](n) / 1e6 for n in xs], color=color, linestyle=":",
                            label="%s model (not measured)" % mode.upper())
            ax.set_title("engine: %s" % w, fontsize=10)
            ax.set_xlabel("threads")
            ax.set_ylabel("M tps")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
        fig.suptitle("Engine level (no SQL): measured on %d cores; dotted = model to 18 threads, "
                     "not a measurement" % common.CORES, fontsize=11)
        fig.tight_layout(rect=(0, 0.1, 1, 0.95))
        fig.savefig(os.path.join(out, "engine.png"), dpi=110)
        plt.close(fig)
        made.append("engine.png")
    return made
