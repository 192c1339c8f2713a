"""Main demo: LMNN inside a scikit-learn Pipeline on the bundled digits data.

Prints the 3-NN test accuracy with the Euclidean metric and with the learned
metric, and LMNN's fit time: on a fresh installation the fit runs on the
numpy twins while the numba kernels compile in the background, so a second
run a minute later shows the compiled speed.  Run: ``python examples/demo_lmnn.py``.
"""

import time

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from metric_estimators import LMNN


def main():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0
    )
    euclidean = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=3))
    learned = make_pipeline(
        StandardScaler(), LMNN(n_neighbors=3, random_state=0),
        KNeighborsClassifier(n_neighbors=3),
    )
    euclidean.fit(X_train, y_train)
    start = time.perf_counter()
    # the default tol stops LMNN on digits long before max_iter=1000, so
    # no ConvergenceWarning is expected (one would say the fit was cut short)
    learned.fit(X_train, y_train)
    fit_time = time.perf_counter() - start
    lmnn = learned.named_steps["lmnn"]
    print(f"digits: {X_train.shape[0]} training points, {X.shape[1]} features")
    print(f"Euclidean 3-NN test accuracy: {euclidean.score(X_test, y_test):.4f}")
    print(f"LMNN      3-NN test accuracy: {learned.score(X_test, y_test):.4f}")
    # on a fresh installation this fit runs on the numpy twins and starts
    # compiling the numba kernels in the background: run the demo again a
    # minute later to see the compiled speed (LMNN(verbose=1) says which)
    print(f"LMNN fit time (scaler + LMNN): {fit_time:.2f} s, {lmnn.n_iter_} iterations")


if __name__ == "__main__":
    main()
