"""The one place the package version is written (pyproject reads it; the header records it)."""

__version__ = "0.1.0"
