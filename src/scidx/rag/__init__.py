"""Retrieval-augmented generation on top of indexes: pipelines, traces, prompts and ``ask``."""
