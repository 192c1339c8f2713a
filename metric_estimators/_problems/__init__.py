"""Problems: objectives and constraint sets that the solvers minimise (no scikit-learn here)."""
