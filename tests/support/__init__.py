"""Shared test support, in one place: import it as ``support.<module>`` from any test.

* :mod:`support.cli`: :func:`~support.cli.run`, the one in-process CLI runner.
* :mod:`support.indexes`: records, :func:`~support.indexes.build_index` (an index written with
  ``format.write_index``, independent of the packer) and :func:`~support.indexes.rewrite`.
* :mod:`support.datasets`: a tiny BEIR dataset on disk.
* :mod:`support.snippets`: the brute-force snippet definition the fast one is checked against.
* :mod:`support.browser`: finding headless Chromium and where artifacts go.

The loopback servers sit beside the tests as modules of their own (``openai_server``,
``chat_server``, ``web_server``, ``pg_server``; ``onnx_models`` builds small ONNX models), since
benchmarks run some of them as scripts. No test module imports another test module.
"""
