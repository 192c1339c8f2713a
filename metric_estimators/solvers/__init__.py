"""Optimisation drivers, their active sets and oracles; no scikit-learn in here."""
