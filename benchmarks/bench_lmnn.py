"""LMNN side by side: ours, PyLMNN, metric-learn, mlpack and Euclidean 3-NN.

    python benchmarks/bench_lmnn.py --datasets iris,digits --impls ours,pylmnn --output lmnn
    python benchmarks/bench_lmnn.py --output lmnn_small --report   # re-render the markdown
    python benchmarks/bench_lmnn.py --panel          # ours against PyLMNN on PANEL

Results merge into ``benchmarks/results/<output>.json`` keyed by (dataset,
impl, params); see ``--help`` and benchmarks/README.md for the commands behind
every published number.

``--panel`` runs LMNN at its defaults against PyLMNN at its defaults on the
data sets of :data:`PANEL` (``--datasets`` / ``--impls`` / ``--output`` may
still narrow or redirect it), both warm (an untimed fit on 500 training
points first, see ``benchmarks/workers/classification.py``), into
``results/lmnn_panel``; the markdown adds one line per data set with the
ratios ours / PyLMNN and whether the targets hold (time <= 1/3, accuracy
>= PyLMNN's, memory added by fit <= 1.5 x).
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import _peer_table, runner  # noqa: E402

# make_classification families (``mcf-<n>-<d>-<n_redundant>-<clusters per
# class>-<10 x class_sep>-<seed>``, 10 classes, 8 informative), the real
# pen-based digits and scikit-learn's digits; smallest first.
PANEL = (
    "digits",
    "penbased",
    "mcf-10000-20-0-1-10-5",
    "mcf-10000-100-0-2-10-2",
    "mcf-15000-80-2-2-15-6",
    "mcf-20000-20-2-2-10-1",
    "mcf-20000-50-2-1-15-4",
    "mcf-25000-30-0-2-15-7",
    "mcf-30000-50-0-1-15-0",
    "mcf-30000-100-2-1-10-3",
)
PANEL_PARAMS = {"ours": {"warmup": True}, "pylmnn": {"warmup": True}}
TITLE = "LMNN: fit time and 3-NN accuracy"
PANEL_TITLE = "LMNN against PyLMNN on a panel of data families"


def panel_argv(argv):
    """``argv`` with the panel's defaults in front (later flags win)."""
    rest = [a for a in argv if a != "--panel"]
    return ["--datasets", ",".join(PANEL), "--impls", "ours,pylmnn",
            "--output", "lmnn_panel", "--params", json.dumps(PANEL_PARAMS),
            "--timeout", "1200", *rest]


def _fmt(value, spec):
    return "" if value is None else format(value, spec)


def render_panel(rows, stem):
    """The generic table plus one comparison line per data set."""
    lines = [_peer_table.render(PANEL_TITLE, stem, rows), "",
             "## Ours / PyLMNN per data set", "",
             "Targets: time ratio (wall) <= 0.333, accuracy difference >= 0, "
             "memory ratio (added by fit) <= 1.5. CPU: seconds of CPU of the fit, "
             "all threads (`time.process_time`), less sensitive to the load of a "
             "shared machine than the wall time.", "",
             "| dataset | n_train × d | time ours (s) | time PyLMNN (s) | time ratio | "
             "CPU ratio | acc ours | acc PyLMNN | acc diff | MB ours | MB PyLMNN | "
             "mem ratio | n_iter ours / PyLMNN | load 1m | targets met |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    by = {}
    for r in rows:
        if "error" not in r:
            by.setdefault(r["dataset"], {})[r["impl"]] = r
    order = [d for d in PANEL if d in by] + sorted(set(by) - set(PANEL))
    for d in order:
        ours, peer = by[d].get("ours"), by[d].get("pylmnn")
        if ours is None or peer is None:
            continue
        t = ours["fit_time"] / peer["fit_time"]
        acc = ours["accuracy"] - peer["accuracy"]
        mem = max(ours["fit_added_mb"], 1.0) / max(peer["fit_added_mb"], 1.0)
        cpu = (ours["fit_cpu"] / peer["fit_cpu"]
               if ours.get("fit_cpu") and peer.get("fit_cpu") else None)
        load = max(runner.load_1m(ours) or 0.0, runner.load_1m(peer) or 0.0)
        met = [name for name, ok in (("time", t <= 1 / 3), ("accuracy", acc >= 0),
                                      ("memory", mem <= 1.5)) if ok]
        lines.append(
            f"| {d} | {ours['n_train']} × {ours['n_features']} | "
            f"{ours['fit_time']:.3f} | {peer['fit_time']:.3f} | {t:.3f} | "
            f"{_fmt(cpu, '.3f')} | {ours['accuracy']:.4f} | {peer['accuracy']:.4f} | {acc:+.4f} | "
            f"{ours['fit_added_mb']:.0f} | {peer['fit_added_mb']:.0f} | {mem:.2f} | "
            f"{ours.get('n_iter', '')} / {peer.get('n_iter', '')} | {load:.1f} | "
            f"{', '.join(met) if len(met) < 3 else 'all'} |")
    lines += ["", "Memory ratio: MB added by fit, each at least 1 MB. Load 1m: the "
              "larger 1-minute load average at the start of the two jobs."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    argv = sys.argv[1:]
    panel = "--panel" in argv
    sys.exit(_peer_table.cli(
        "lmnn",
        datasets="iris,wine,breast_cancer,digits,synth-10000-50,synth-30000-100,synth-60000-100",
        impls="ours,pylmnn,metric_learn,mlpack,euclidean",
        stem="lmnn",
        title=PANEL_TITLE if panel else TITLE,
        argv=panel_argv(argv) if panel else argv,
        render_rows=render_panel if panel else None,
    ))
