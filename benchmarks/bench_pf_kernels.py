"""Project and Forget's kernels alone: triangle oracle per call, projection per constraint.

    python benchmarks/bench_pf_kernels.py --sizes 1000     # -> results/pf_kernels.{json,md}

One fresh process per measurement, ``benchmarks/workers/pf_kernels.py`` (what
is timed is described there). Thread pools are the libraries' defaults unless
``--threads`` says otherwise (the oracle kernel is parallel).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import runner  # noqa: E402
from benchmarks.runner import Column  # noqa: E402

STEM = "pf_kernels"
KERNELS = ("triangle_argmin", "project_triangles_unit", "project_paths_l2")


def jobs(args) -> list:
    out = []
    for n in sorted(args.sizes):
        dataset = f"normal-{n}"
        out += [runner.Job("pf_kernels", dataset, "triangle_argmin", {"dtype": dtype},
                           python=args.python) for dtype in ("float32", "float64")]
        out += [runner.Job("pf_kernels", dataset, kernel, {}, python=args.python)
                for kernel in KERNELS[1:]]
    return out


def render(rows: list, stem: str = STEM) -> str:
    lines = runner.report_header(
        "Project and Forget kernels alone", stem, rows,
        ["Oracle: seconds per `triangle_argmin` call (min-plus square of the "
         "|N(0,1)| instance with its argmin, upper triangle, tiled). Projection: one "
         "Hildreth pass over the most violated triangle of every violated edge; "
         "`project_triangles_unit` (uniform weight, three entries moved by the same "
         "amount) against `project_paths_l2` (general weighted CSR kernel), same "
         "active set and starting point. Best of 5 after a warm-up call."])
    oracle = [r for r in rows if r["impl"] == "triangle_argmin"]
    passes = [r for r in rows if r["impl"] != "triangle_argmin"]
    lines += ["## Oracle", "", runner.markdown_table(oracle, [
        Column("instance", "dataset"), Column("dtype", lambda r: r["params"].get("dtype")),
        Column("seconds per call", "seconds_per_call", "{:.3f}"),
        Column("threads", "threads"), Column("load 1m", runner.load_1m, "{:.2f}"),
        Column("note", runner.error_note)])]
    lines += ["## Projection pass", "", runner.markdown_table(passes, [
        Column("instance", "dataset"), Column("kernel", "impl"),
        Column("constraints", "n_constraints"),
        Column("seconds per pass", "seconds_per_pass", "{:.4f}"),
        Column("ns per constraint", "ns_per_constraint", "{:.1f}"),
        Column("load 1m", runner.load_1m, "{:.2f}"), Column("note", runner.error_note)])]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = runner.base_parser(__doc__.splitlines()[0], timeout=600, repeat=False,
                                output=STEM)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000])
    args = parser.parse_args(argv)
    return runner.execute(args.output, jobs(args), args, render, skip_after_failure=False)


if __name__ == "__main__":
    sys.exit(main())
