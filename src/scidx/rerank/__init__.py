"""Rerankers: the built-in ``cross-encoder`` (ONNX, CPU) and ``http`` providers, and plugins.

The stage itself (the :class:`~scidx.index.rerank.Reranker` protocol and where it runs) is in
the runtime, :mod:`scidx.index.rerank`; this package holds the heavy, optional parts and
:func:`~scidx.rerank.registry.load_reranker`, which finds a reranker by name.
"""
