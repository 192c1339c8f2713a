"""Optimisation engines; no scikit-learn in here."""
