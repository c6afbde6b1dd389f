"""Shared test support, in one place: import it as ``support.<module>`` from any test.

* :mod:`support.cli`: :func:`~support.cli.run`, the one in-process CLI runner.
* :mod:`support.indexes`: records, :func:`~support.indexes.build_index` (an index written with
  ``format.write_index``, independent of the packer) and :func:`~support.indexes.rewrite`.
* :mod:`support.datasets`: a tiny BEIR dataset on disk.
* :mod:`support.snippets`: the brute-force snippet definition the fast one is checked against.
* :mod:`support.browser`: finding headless Chromium and where artifacts go.

* The loopback servers: :mod:`support.openai_server` (also run as a script by
  ``benchmarks/bench_openai.py``), :mod:`support.chat_server`, :mod:`support.web_server`,
  :mod:`support.pg_server`; :mod:`support.onnx_models` builds small ONNX models.

No test module imports another test module, nor a helper module outside this package.
"""
