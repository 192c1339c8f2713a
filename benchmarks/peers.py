"""Virtual environments for the peer libraries the benchmarks compare against.

Each peer gets its own environment under ``benchmarks/.venvs/<name>`` with the
exact versions it needs (several peers cannot be installed next to each other
or next to a current scikit-learn). Environments are created on demand; a
marker file records a successful install, so calling :func:`ensure` again is
cheap and re-installs only when the pinned requirements change.

Command line::

    python benchmarks/peers.py setup                 # every peer
    python benchmarks/peers.py setup pylmnn mlpack   # only these
    python benchmarks/peers.py list                  # status of each peer
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
VENV_ROOT = BENCH_DIR / ".venvs"
MARKER = ".benchmarks-installed.json"

# PyLMNN imports GPyOpt at package import time for its optional Bayesian
# hyper-parameter search, which the benchmarks never use. GPyOpt (and GPy)
# no longer install on current Pythons, so a stub stands in for it.
_GPYOPT_STUB = {
    "GPyOpt/__init__.py": '"""Stub: GPyOpt is not installed (benchmarks only)."""\n',
    "GPyOpt/methods.py": (
        '"""Stub for ``from GPyOpt.methods import BayesianOptimization``."""\n\n\n'
        "class BayesianOptimization:\n"
        '    """Placeholder that refuses to run."""\n\n'
        "    def __init__(self, *args, **kwargs):\n"
        "        raise ImportError(\n"
        '            "GPyOpt is stubbed out in this benchmark environment"\n'
        "        )\n"
    ),
}

# pyDML 0.1.0 (Suarez, Garcia & Herrera) still uses numpy's aliases np.float,
# np.int, ... removed in numpy 1.24, and no numpy that has them installs on
# Python 3.11 with a current scikit-learn.  A .pth line restores the aliases
# in its venv only, before pyDML's compiled modules import numpy.
_NUMPY_ALIASES = {
    "pydml_numpy_aliases.pth": "import pydml_numpy_aliases\n",
    "pydml_numpy_aliases.py": (
        '"""Restore numpy aliases removed in numpy 1.24 (benchmarks only)."""\n\n'
        "import numpy\n\n"
        "for _name, _type in ((\"float\", float), (\"int\", int), (\"bool\", bool),\n"
        "                     (\"object\", object), (\"complex\", complex)):\n"
        "    if _name not in numpy.__dict__:\n"
        "        setattr(numpy, _name, _type)\n"
    ),
}


@dataclass(frozen=True)
class Peer:
    """A peer library: the interpreter it runs on and what to install."""

    name: str
    python: str
    requirements: tuple[str, ...]
    stub_files: dict[str, str] = field(default_factory=dict)
    #: installed first; the requirements are then built without build
    #: isolation, against these (for sdists that import them in setup.py)
    build_requirements: tuple[str, ...] = ()

    @property
    def venv(self) -> Path:
        """Directory of this peer's virtual environment."""
        return VENV_ROOT / self.name

    @property
    def interpreter(self) -> Path:
        """The venv's Python executable."""
        return self.venv / "bin" / "python"

    def spec(self) -> dict:
        """What the marker records; a change triggers a re-install."""
        spec = {
            "python": self.python,
            "requirements": list(self.requirements),
            "stubs": sorted(self.stub_files),
        }
        if self.build_requirements:
            spec["build_requirements"] = list(self.build_requirements)
        return spec


PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (
        Peer(
            name="metric_learn",
            python="3.11",
            # metric-learn 0.7.0 passes force_all_finite, removed in sklearn 1.8.
            requirements=(
                "metric-learn==0.7.0",
                "scikit-learn==1.7.2",
                "numpy==2.3.5",
                "scipy==1.16.3",
            ),
        ),
        Peer(
            name="pylmnn",
            python="3.11",
            # PyLMNN 1.6.4 hands a 2-D x0 to scipy.optimize.minimize, which
            # scipy >= 1.11 rejects; sklearn 1.2 is the last with wheels for
            # numpy 1.24 / scipy 1.10 on Python 3.11.
            requirements=(
                "PyLMNN==1.6.4",
                "numpy==1.24.4",
                "scipy==1.10.1",
                "scikit-learn==1.2.2",
                "six==1.17.0",
            ),
            stub_files=_GPYOPT_STUB,
        ),
        Peer(
            name="mlpack",
            python="3.11",
            requirements=(
                "mlpack==4.8.0",
                "scikit-learn==1.7.2",
                "numpy==2.3.5",
                "scipy==1.16.3",
                "pandas==2.3.3",
            ),
        ),
        Peer(
            name="pydml",
            python="3.11",
            # an sdist whose setup.py imports Cython and numpy
            requirements=(
                "pyDML==0.1.0",
                "scikit-learn==1.9.1",
                "numpy==2.4.6",
                "scipy==1.17.1",
                "six==1.17.0",
            ),
            stub_files=_NUMPY_ALIASES,
            build_requirements=("Cython==3.3.2", "numpy==2.4.6", "setuptools", "wheel"),
        ),
    )
}


class SetupError(RuntimeError):
    """A peer environment could not be created or installed."""


def base_interpreter(version: str) -> str:
    """Locate a ``pythonX.Y`` executable to build a venv from."""
    found = shutil.which(f"python{version}")
    if found:
        return found
    for candidate in sorted(Path.home().glob(f".pyenv/versions/{version}*/bin/python{version}")):
        return str(candidate)
    raise SetupError(f"no python{version} interpreter found on PATH or in ~/.pyenv")


def _run(cmd: list[str], what: str) -> None:
    """Run ``cmd``; on failure raise SetupError with the tail of its output."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise SetupError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def is_ready(peer: Peer) -> bool:
    """True when the venv exists and was installed with the current spec."""
    marker = peer.venv / MARKER
    if not (marker.is_file() and peer.interpreter.exists()):
        return False
    try:
        return json.loads(marker.read_text()) == peer.spec()
    except ValueError:
        return False


def _site_packages(peer: Peer) -> Path:
    """The venv's purelib directory, asked from the venv's own interpreter."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    out = subprocess.run([str(peer.interpreter), "-c", code], capture_output=True,
                         text=True, check=True)
    return Path(out.stdout.strip())


def _write_stubs(peer: Peer) -> None:
    """Write the peer's stub modules into its site-packages."""
    site = _site_packages(peer)
    for relpath, text in peer.stub_files.items():
        target = site / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def ensure(name: str, log=print) -> Path:
    """Create and install the peer's venv if needed; return its interpreter."""
    if name not in PEERS:
        raise SetupError(f"unknown peer {name!r}; known: {', '.join(PEERS)}")
    peer = PEERS[name]
    if is_ready(peer):
        return peer.interpreter
    log(f"[peers] setting up {name} in {peer.venv}")
    (peer.venv / MARKER).unlink(missing_ok=True)
    if not peer.interpreter.exists():
        _run([base_interpreter(peer.python), "-m", "venv", str(peer.venv)], "venv creation")
    pip = [str(peer.interpreter), "-m", "pip", "--disable-pip-version-check", "-q"]
    _run(pip + ["install", "--upgrade", "pip"], f"pip upgrade for {name}")
    isolation = []
    if peer.build_requirements:
        _run(pip + ["install", *peer.build_requirements], f"build requirements for {name}")
        isolation = ["--no-build-isolation"]
    _run(pip + ["install", *isolation, *peer.requirements], f"pip install for {name}")
    _write_stubs(peer)
    _run([str(peer.interpreter), "-m", "pip", "check"], f"pip check for {name}")
    (peer.venv / MARKER).write_text(json.dumps(peer.spec(), indent=2))
    log(f"[peers] {name} ready")
    return peer.interpreter


def _cli(argv: list[str] | None = None) -> int:
    """Entry point of ``python benchmarks/peers.py``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    setup = sub.add_parser("setup", help="create/install peer venvs")
    setup.add_argument("names", nargs="*", help=f"peers (default: all of {', '.join(PEERS)})")
    sub.add_parser("list", help="show which peer venvs are ready")
    args = parser.parse_args(argv)

    if args.command == "list":
        for name, peer in PEERS.items():
            state = "ready" if is_ready(peer) else "not set up"
            print(f"{name:14s} {state:11s} {' '.join(peer.requirements)}")
        return 0

    failed = 0
    for name in args.names or list(PEERS):
        try:
            print(f"{name}: {ensure(name)}")
        except SetupError as exc:
            failed += 1
            print(f"{name}: FAILED\n{exc}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_cli())
