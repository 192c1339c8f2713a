"""Matrices given by users: arrays, initial maps, square and symmetric
matrices, priors and signed graphs.

:func:`check_symmetric_matrix` is the one validator of square matrices
(dissimilarities, signed graphs, weights, priors), dense or sparse; the
positive-definiteness test itself is
:func:`metric_estimators._linalg.check_positive_definite`.
"""

import warnings

import numpy as np
from scipy import sparse

from .._linalg import check_positive_definite

__all__ = [
    "check_array_2d",
    "check_init",
    "check_prior",
    "check_signed_graph_has_negative",
    "check_sparse_edge_weights",
    "check_sparse_signed_graph",
    "check_square_matrix",
    "check_symmetric_matrix",
]


def check_array_2d(A, name):
    """Validate a finite real 2-D array and return it as float64."""
    A = np.asarray(A)
    if A.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {A.dtype}.")
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {A.ndim} dimensions.")
    A = A.astype(np.float64)
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def check_init(init, n_features, n_components):
    """Validate an initial linear map ``init`` given as an array; a string is
    returned unchanged.

    The array is ``L0`` of shape ``(n_components, n_features)``: finite, at
    most ``n_features`` rows, ``n_components`` rows if that is not None, and
    of full row rank.  The string options are checked by the estimator's
    ``_parameter_constraints``; :func:`~metric_estimators._linalg.initialize_components`
    computes the map for them.
    """
    if not isinstance(init, np.ndarray):
        return init
    init = check_array_2d(init, "init")
    if init.shape[1] != n_features:
        raise ValueError(
            f"init has {init.shape[1]} columns, but X has {n_features} "
            "features."
        )
    if init.shape[0] > n_features:
        raise ValueError(
            f"init has {init.shape[0]} rows (components), more than the "
            f"{n_features} features."
        )
    if n_components is not None and init.shape[0] != n_components:
        raise ValueError(
            f"init has {init.shape[0]} rows but n_components={n_components}."
        )
    if init.size == 0 or np.linalg.matrix_rank(init) < init.shape[0]:
        # a rank-deficient L0 gives a degenerate metric (for L0 = 0 the
        # gradient of LMNN's loss vanishes and L never moves)
        raise ValueError(
            f"init must have full row rank ({init.shape[0]}), i.e. "
            "L0^T L0 must be positive definite on the embedding; got rank "
            f"{np.linalg.matrix_rank(init) if init.size else 0}."
        )
    return init.copy()


def check_square_matrix(M, name, size=None, *, like=None):
    """Validate a finite real dense square matrix and return it as float64.

    ``size`` fixes the number of rows and columns; ``like`` names the matrix
    whose shape it is, for the error message.
    """
    if sparse.issparse(M):
        raise TypeError(f"{name} must be a dense array, got a sparse matrix.")
    arr = np.asarray(M)
    if arr.dtype == object:  # numbers held as objects (scikit-learn accepts them)
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers: {exc}") from None
    if arr.dtype.kind not in "iufb":
        raise TypeError(
            f"{name} must be a real numeric array, got dtype {arr.dtype}."
        )
    if size is not None and arr.shape != (size, size):
        if like is not None:
            raise ValueError(
                f"{name} must have the same shape as {like} {(size, size)}, "
                f"got {arr.shape}."
            )
        raise ValueError(
            f"{name} must have shape ({size}, {size}), got {arr.shape}."
        )
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {arr.shape}.")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return arr


def check_symmetric_matrix(M, name, size=None, *, like=None,
                           accept_sparse=False, nonnegative=False,
                           zero_diagonal=False, positive_off_diagonal=False,
                           rtol=0.0, diagonal_hint=""):
    """Validate a finite real symmetric matrix, dense or sparse.

    The one validator of square matrices given by users (dissimilarities,
    signed graphs, weights, priors).  Checks, in this order: real numeric
    dtype, shape (square, or ``(size, size)``; ``like`` names the matrix
    whose shape that is), finite entries, then on request non-negative
    entries, a zero diagonal, strictly positive entries off the diagonal,
    and symmetry within ``rtol`` relative and ``1e-10`` times the largest
    absolute entry absolute.  A sparse matrix (``accept_sparse=True``) must
    moreover have a symmetric sparsity pattern.  ``diagonal_hint`` is appended
    to the error about a non-zero diagonal.

    Returns
    -------
    M : ndarray of float64 ``(M + M.T) / 2``, or, for sparse input, the
        validated matrix as CSR float64 with duplicates summed (not
        symmetrised: callers read its upper triangle).
    """
    if sparse.issparse(M):
        if not accept_sparse:
            raise TypeError(
                f"{name} must be a dense array, got a sparse matrix."
            )
        return _check_symmetric_sparse(M, name, nonnegative=nonnegative,
                                       zero_diagonal=zero_diagonal,
                                       diagonal_hint=diagonal_hint)
    arr = check_square_matrix(M, name, size, like=like)
    _check_not_empty(arr.shape, name)
    if zero_diagonal and np.any(np.diag(arr) != 0):
        _raise_nonzero_diagonal(name, np.diag(arr), diagonal_hint)
    if nonnegative and arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be non-negative; its smallest entry is "
                         f"{arr.min():.3g}.")
    if positive_off_diagonal and arr.size and (
        arr[~np.eye(arr.shape[0], dtype=bool)].min(initial=np.inf) <= 0
    ):
        raise ValueError(f"{name} must be strictly positive off the diagonal "
                         "(a zero weight leaves the entry free and the problem "
                         "without a unique solution).")
    scale = max(np.abs(arr).max() if arr.size else 0.0, np.finfo(float).tiny)
    differ = ~np.isclose(arr, arr.T, rtol=rtol, atol=1e-10 * scale)
    if differ.any():
        gap = np.where(differ, np.abs(arr - arr.T), -1.0)
        i, j = np.unravel_index(int(np.argmax(gap)), gap.shape)
        n_pairs = int(np.count_nonzero(np.triu(differ, 1)))
        raise ValueError(
            f"{name} must be symmetric: {name}[{i}, {j}] = {arr[i, j]:.6g} but "
            f"{name}[{j}, {i}] = {arr[j, i]:.6g} (the largest difference; "
            f"{n_pairs} pair(s) i < j differ). For a matrix that is symmetric "
            f"up to round-off, pass ({name} + {name}.T) / 2.")
    return (arr + arr.T) / 2


def _check_not_empty(shape, name):
    """A (0, 0) matrix has no entry to fit: say so, in scikit-learn's words."""
    if shape[0] == 0:
        raise ValueError(
            f"{name} is empty: found array with 0 sample(s) (shape={shape}) "
            f"while a minimum of 1 is required; {name} must be a square "
            "matrix with at least one row.")


def _raise_nonzero_diagonal(name, diagonal, hint):
    bad = np.flatnonzero(diagonal != 0)
    raise ValueError(
        f"{name} must have a zero diagonal; {bad.size} of its {diagonal.size} "
        f"diagonal entries are not zero (e.g. {name}[{bad[0]}, {bad[0]}] = "
        f"{diagonal[bad[0]]:.3g}).{(' ' + hint) if hint else ''}"
    )


def _check_symmetric_sparse(M, name, *, nonnegative, zero_diagonal,
                            diagonal_hint=""):
    """The sparse branch of :func:`check_symmetric_matrix`."""
    M = sparse.csr_matrix(M, dtype=np.float64)
    M.sum_duplicates()
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}.")
    _check_not_empty(M.shape, name)
    if not np.all(np.isfinite(M.data)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if zero_diagonal and np.any(M.diagonal() != 0):
        loops = np.flatnonzero(M.diagonal() != 0)
        raise ValueError(
            f"{name} must have a zero diagonal: a sparse graph has no "
            f"self-loops, but node {loops[0]} has one ({loops.size} in all)."
            f"{(' ' + diagonal_hint) if diagonal_hint else ''}")
    if nonnegative and M.nnz and M.data.min() < 0:
        raise ValueError(f"{name} must be non-negative; its smallest entry is "
                         f"{M.data.min():.3g}.")
    asym = abs(M - M.T)
    scale = max(float(np.abs(M.data).max(initial=0.0)), np.finfo(float).tiny)
    if asym.nnz and asym.max() > 1e-10 * scale:
        A = asym.tocoo()
        k = int(np.argmax(A.data))
        i, j = int(A.row[k]), int(A.col[k])
        raise ValueError(f"{name} must be symmetric: {name}[{i}, {j}] = "
                         f"{M[i, j]:.6g} but {name}[{j}, {i}] = {M[j, i]:.6g}.")
    # the same stored pattern on both sides, explicit zeros included (a
    # stored zero is an entry -- e.g. an edge of length 0 -- not an absence)
    P = sparse.csr_matrix((np.ones(M.nnz, dtype=np.int8), M.indices,
                           M.indptr), shape=M.shape)
    if (P - P.T).nnz:
        D = (P - P.T).tocoo()
        k = int(np.argmax(D.data > 0))
        raise ValueError(
            f"{name} must have a symmetric sparsity pattern: entry "
            f"({D.row[k]}, {D.col[k]}) is stored (value "
            f"{M[D.row[k], D.col[k]]:.3g}; explicit zeros count as entries) "
            f"but ({D.col[k]}, {D.row[k]}) is not.")
    return M


def check_prior(prior, n_features):
    """Validate a prior given as a matrix; a string is returned unchanged.

    The matrix must be symmetric (within a relative ``1e-8``) positive
    definite (:func:`~metric_estimators._linalg.check_positive_definite`) of
    shape ``(n_features, n_features)``; it is returned symmetrised.  The
    string options are checked by the estimator's ``_parameter_constraints``.
    """
    if isinstance(prior, str):
        return prior
    prior = check_symmetric_matrix(prior, "prior", n_features, rtol=1e-8)
    return check_positive_definite(prior, "prior")


def check_signed_graph_has_negative(A, estimator):
    """Warn when a signed graph has no negative (repulsive) entry.

    Without a negative weight, putting every node in one cluster disagrees
    with no edge, so correlation clustering has nothing to decide.
    ``A`` is a validated dense or sparse matrix.
    """
    data = A.data if sparse.issparse(A) else A
    if data.size and data.min() >= 0:
        warnings.warn(
            f"{type(estimator).__name__}: A has no negative entry, so a single "
            "cluster of all nodes is optimal (it violates no edge). Correlation "
            "clustering needs repulsive (negative) weights between nodes that "
            "should be apart; for a similarity matrix S in [0, 1], use e.g. "
            "A = 2 * S - 1, or S - threshold.",
            UserWarning, stacklevel=3,
        )


def check_sparse_signed_graph(A, name="A"):
    """Validate a sparse signed graph and return it as CSR float64.

    Symmetric (values and pattern), finite, no self-loop (no stored diagonal
    entry other than zero) and no explicit stored zero: in a sparse signed
    graph a stored entry is an edge and needs a non-zero weight.
    ``name`` is the matrix's name in the error messages.
    """
    M = check_symmetric_matrix(A, name, accept_sparse=True,
                               zero_diagonal=True)
    zero = M.data == 0
    if np.any(zero):
        C = M.tocoo()
        k = int(np.flatnonzero(C.data == 0)[0])
        raise ValueError(
            f"{name} has an explicit stored zero at ({C.row[k]}, "
            f"{C.col[k]}) ({int(zero.sum())} stored zeros in all): in a "
            f"sparse signed graph a stored entry is an edge and needs a "
            f"non-zero weight, an absent entry means no information. "
            f"Drop stored zeros with {name}.eliminate_zeros().")
    return M


def check_sparse_edge_weights(sample_weight, D, rows, cols):
    """Validate the ``sample_weight`` of a sparse ``D``; return it on D's edges.

    ``sample_weight`` has ``D``'s shape, dense or sparse; a sparse one must
    be finite, symmetric and stored on D's edges only.  Its values on the
    edges ``(rows[e], cols[e])`` of ``D`` must be finite and strictly
    positive.

    Returns
    -------
    we : ndarray of float64, shape (n_edges,)
    """
    if sparse.issparse(sample_weight):
        W = sparse.csr_matrix(sample_weight, dtype=np.float64)
    else:
        W = np.asarray(sample_weight)
    if W.shape != D.shape:
        raise ValueError("sample_weight must have the same shape as "
                         f"D {D.shape}, got {W.shape}.")
    if sparse.issparse(W):
        W.sum_duplicates()
        if not np.all(np.isfinite(W.data)):
            raise ValueError("sample_weight contains NaN or infinity.")
        asym = abs(W - W.T)
        if asym.nnz and asym.max() > 1e-10 * max(abs(W).max(), 1e-300):
            raise ValueError("sample_weight must be symmetric.")
        PW = sparse.csr_matrix((np.ones(W.nnz), W.indices, W.indptr),
                               shape=W.shape)
        PW.setdiag(0)
        PW.eliminate_zeros()
        PD = sparse.csr_matrix((np.ones(D.nnz), D.indices, D.indptr),
                               shape=D.shape)
        off = PW - PW.multiply(PD)
        off.eliminate_zeros()
        if off.nnz:
            r, c = off.nonzero()
            raise ValueError(
                f"sample_weight has a stored entry at ({r[0]}, {c[0]}), which is "
                f"not an edge of D ({off.nnz} such entries): weights apply to "
                f"the stored entries of a sparse D only.")
        we = np.asarray(W[rows, cols]).ravel()
    else:
        we = W.astype(np.float64)[rows, cols]
    if not np.all(np.isfinite(we)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if we.size and we.min() <= 0:
        raise ValueError("sample_weight must be strictly positive on the "
                         "edges of D.")
    return we
