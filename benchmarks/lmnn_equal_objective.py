"""LMNN against PyLMNN at equal iterations and at equal (exact) objective.

    python benchmarks/lmnn_equal_objective.py --dataset mcf-10000-50-0-1-15-0 \
        > benchmarks/results/lmnn_equal_objective.txt

Same data, split and scaling as ``benchmarks/workers/classification.py``.
PyLMNN (its defaults, ``n_neighbors=3``, ``random_state=0``) is fitted in its
own virtual environment (``benchmarks/peers.py``) and hands back its ``L``.
Both maps are then scored with the *exact* hinge objective of
:class:`metric_estimators._problems.lmnn.LMNNObjective` (every impostor
pair within the margin, no subset; ``mu = 0.5``, PyLMNN's objective is
``2x`` that) and by their 3-NN test accuracy.  Ours (defaults, hinge) is
then refitted with ``max_iter`` set to PyLMNN's number of iterations (equal
iterations) and to the first iteration at which its exact objective is at
most PyLMNN's (equal objective), found by refitting with growing
``max_iter``.  No timing: accuracies and objectives only.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import peers  # noqa: E402
from benchmarks.workers.classification import knn_accuracy, load_dataset, split_scaled  # noqa: E402

PEER_CODE = """
import json, sys, numpy as np
sys.path.insert(0, {root!r})
from benchmarks.workers.classification import load_dataset, split_scaled
from pylmnn import LargeMarginNearestNeighbor
X, _, y, _ = split_scaled(*load_dataset({dataset!r}))
m = LargeMarginNearestNeighbor(n_neighbors=3, random_state=0).fit(X, y)
np.save({out!r}, m.components_)
print(json.dumps({{"n_iter": int(m.n_iter_)}}))
"""


def exact_loss(L, X, y):
    """The exact hinge objective of ``L`` (no impostor subset)."""
    from metric_estimators._problems.lmnn import ImpostorSet, LMNNObjective, find_target_neighbors

    y_idx = np.unique(y, return_inverse=True)[1]
    targets = find_target_neighbors(X, y_idx, 3)
    imps = ImpostorSet(y_idx, (targets >= 0).any(axis=1), 10**10)
    obj = LMNNObjective(X, targets, imps, 0.5, False, L.shape[0])
    return float(obj(L.ravel())[0])


def ours(X, y, **params):
    from metric_estimators import LMNN

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LMNN(n_neighbors=3, random_state=0, **params).fit(X, y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mcf-10000-50-0-1-15-0")
    args = parser.parse_args(argv)
    root = str(Path(__file__).resolve().parents[1])
    X, X_test, y, y_test = split_scaled(*load_dataset(args.dataset))

    def score(L):
        return knn_accuracy(X @ L.T, y, X_test @ L.T, y_test)

    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "L.npy")
        code = PEER_CODE.format(root=root, dataset=args.dataset, out=out)
        res = subprocess.run([str(peers.ensure("pylmnn")), "-c", code], check=True,
                             capture_output=True, text=True, cwd=root)
        peer_iter = json.loads(res.stdout.strip().splitlines()[-1])["n_iter"]
        L_peer = np.load(out)
    f_peer = exact_loss(L_peer, X, y)
    print(f"{args.dataset}: {X.shape[0]} x {X.shape[1]} training points")
    print(f"PyLMNN defaults: n_iter {peer_iter}, exact objective {f_peer:.6g}, "
          f"3-NN accuracy {score(L_peer):.4f}")
    full = ours(X, y)
    print(f"ours defaults:   n_iter {full.n_iter_}, exact objective "
          f"{exact_loss(full.components_, X, y):.6g}, 3-NN accuracy "
          f"{score(full.components_):.4f}")
    same = ours(X, y, max_iter=peer_iter)
    print(f"ours max_iter={peer_iter} (equal iterations): exact objective "
          f"{exact_loss(same.components_, X, y):.6g}, 3-NN accuracy "
          f"{score(same.components_):.4f}")
    for k in range(1, full.n_iter_ + 1):
        est = ours(X, y, max_iter=k)
        f = exact_loss(est.components_, X, y)
        if f <= f_peer:
            print(f"ours max_iter={k} (first iteration at or below PyLMNN's exact "
                  f"objective): exact objective {f:.6g}, 3-NN accuracy "
                  f"{score(est.components_):.4f}")
            break
    else:
        print("ours never reached PyLMNN's exact objective")
    return 0


if __name__ == "__main__":
    sys.exit(main())
