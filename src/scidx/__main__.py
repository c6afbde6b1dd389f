"""``python -m scidx`` runs the command-line interface."""

from scidx.cli import main

main()
