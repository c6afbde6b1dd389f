"""Evaluation: retrieval metrics, eval gates and the BEIR benchmark runner."""
