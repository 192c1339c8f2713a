"""scikit-learn's private names are imported in one module only.

:mod:`metric_estimators._sklearn_private` imports each private scikit-learn
name the package needs, with the reason; every other module imports them
from there, so that a scikit-learn release that moves one breaks one module.
"""

import ast
from pathlib import Path

import metric_estimators

PACKAGE = Path(metric_estimators.__file__).resolve().parent
HOME = PACKAGE / "_sklearn_private.py"


def _private_sklearn_imports(path):
    """``(line, text)`` of each import of a private scikit-learn module or name in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
            names = []
        else:
            continue
        for module in modules:
            if module.split(".")[0] != "sklearn":
                continue
            private_module = any(part.startswith("_") for part in module.split("."))
            private_names = [n for n in names if n.startswith("_")]
            if private_module or private_names:
                found.append((node.lineno, f"{module}: {', '.join(names)}"))
    return found


def test_private_names_are_imported_only_by_sklearn_private():
    offenders = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py")) if path != HOME
        if (hits := _private_sklearn_imports(path))
    }
    assert offenders == {}


def test_the_detector_sees_private_imports():
    # the one module allowed to import them does, so the test above can fail
    hits = _private_sklearn_imports(HOME)
    assert any("_param_validation" in text for _, text in hits)
    assert any("_fit_context" in text for _, text in hits)


def test_every_private_name_is_explained():
    import metric_estimators._sklearn_private as private

    source = HOME.read_text()
    for name in private.__all__:
        assert getattr(private, name) is not None
        # a comment block precedes the import of each name
        line = next(l for l in source.splitlines()
                    if l.startswith(("from sklearn", "import sklearn")) and name in l)
        before = source.split(line)[0].rstrip().splitlines()[-1]
        assert before.startswith("#"), name
