"""Build-tool integrations: the setuptools and hatchling hooks and the MkDocs plugin.

Each module is loaded by its tool through an entry point in pyproject.toml (never imported
by the rest of scidx): :mod:`.setuptools_hook` (``setuptools.finalize_distribution_options``),
:mod:`.hatch_hook` (``hatch``) and :mod:`.mkdocs_plugin` (``mkdocs.plugins``). See
docs/integrations.md.
"""
