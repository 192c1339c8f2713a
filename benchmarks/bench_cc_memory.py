"""Bytes per node pair of one dense correlation-clustering fit.

    python benchmarks/bench_cc_memory.py planted 2000
    python benchmarks/bench_cc_memory.py power --data-dir ../shared/data
    python benchmarks/bench_cc_memory.py collab 11000
    python benchmarks/bench_cc_memory.py --report

One job, one fit per process (``benchmarks/workers/cc_memory.py``, whose
docstring gives the protocol and the instances; run it under the benchmark
lock, ``--lock``). Rows merge into ``benchmarks/results/cc_memory.json``
keyed by (instance, n, label); the markdown is re-rendered. Needs networkx.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.workers import cc_memory as worker  # noqa: E402

STEM = "cc_memory"


def render(rows: list, stem: str = STEM) -> str:
    """One line per instance, size and label."""
    lines = runner.report_header(
        "Bytes per node pair of dense correlation clustering", stem, rows,
        [worker.__doc__.split("\n\n", 1)[1].strip(),
         *dict.fromkeys((r.get("run") or {}).get("note") for r in rows
                        if (r.get("run") or {}).get("note"))])
    lines += ["| instance | n | label | fit adds (B/pair) | process peak (B/pair) "
              "| process peak (MB) | active set max (B/pair) | triangles kept "
              "| LP objective | lower bound | converged | fit (s) | load | date |",
              "|" + "---|" * 14]

    def key(r):
        return (r["dataset"], r.get("n") or r["params"].get("n", 0),
                r["params"].get("label", "default"))

    for r in sorted(rows, key=key):
        label = r["params"].get("label", "default")
        date = (r.get("run") or {}).get("date", "")[:10]
        if "error" in r:
            lines.append(f"| {r['dataset']} | {r['params'].get('n', '')} | {label} | "
                         f"error: {r['error'][:80]} |" + " |" * 10)
            continue
        lines.append(
            f"| {r['dataset']} | {r['n']} | {label} | "
            f"{r['fit_added_bytes_per_pair']:.0f} | "
            f"{r['process_bytes_per_pair']:.0f} | {r['process_peak_mb']:.0f} | "
            f"{r['active_set_bytes_per_pair']:.0f} | {r['n_active']} | "
            f"{r['lp_objective']!r} | {r['lower_bound']:.6f} | "
            f"{r.get('converged', '-')} | "
            f"{r['fit_time']:.1f} | {runner.load_1m(r)} | {date} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=3600, repeat=False,
                                output=STEM, data_dir=True)
    parser.add_argument("instance", nargs="?", choices=["planted", "power", "collab"])
    parser.add_argument("n", nargs="?", type=int, default=0)
    parser.add_argument("--label", default="default",
                        help="names a variant of the code measured (part of the row's key)")
    args = parser.parse_args(argv)
    if not args.report and args.instance is None:
        parser.error("an instance is needed (or --report)")
    params = {"n": 0 if args.instance == "power" else args.n}
    if args.label != "default":
        params["label"] = args.label
    jobs = [] if args.report else [runner.Job("cc_memory", args.instance, "ours", params,
                                              python=args.python)]
    return runner.execute(args.output, jobs, args, render)


if __name__ == "__main__":
    sys.exit(main())
