"""The help conventions of ``toolup-rag``, applied once to the whole command tree.

Every command module declares its options as it likes; :func:`apply` then makes the help read
the way command-line users expect, so no command has to repeat it (and a command added later
gets it too):

* usage lines name arguments in capitals (``search [OPTIONS] INDEX QUERY``, not ``{index}``);
* a value option shows its kind (``-k INTEGER``, ``--config PATH``) and a flag shows nothing;
* ``-h`` is ``--help``;
* one spelling per option: a one-letter long name beside the same short one (``--k`` beside
  ``-k``) is dropped;
* commands are listed in the order a user meets them (:data:`COMMAND_ORDER`, then the rest);
* every command's help ends with the exit codes it can return (:data:`EXIT_CODES`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args, get_origin

__all__ = ["COMMAND_ORDER", "EXIT_CODES", "HELP_OPTIONS", "apply"]

HELP_OPTIONS = ["-h", "--help"]

COMMAND_ORDER = (
    "pack-docs",
    "search",
    "inspect",
    "serve",
    "query",
    "ask",
    "export",
    "llms-txt",
    "eval",
    "bench",
)

# What each exit code means (scidx.cli.exits is the reference table).
_MEANINGS = {
    0: "success",
    1: "invalid config, arguments or input",
    2: "embedding provider or chat model failed",
    3: "an output could not be written",
    4: "an index is corrupt or not a .scidx",
    5: "invalid query",
    6: "stale (--check)",
    7: "below the baseline",
    8: "PostgreSQL unreachable or refused",
}

#: The exit codes each command can return; a command not listed shows them all.
EXIT_CODES: dict[str, tuple[int, ...]] = {
    "pack-docs": (0, 1, 2, 3, 6),
    "search": (0, 1, 2, 4, 5),
    "inspect": (0, 1, 4),
    "serve": (0, 1, 2, 4),
    "query": (0, 1, 2, 3, 4, 5, 8),
    "ask": (0, 1, 2, 3, 4, 5, 8),
    "export": (0, 1, 4, 8),
    "llms-txt": (0, 1, 3, 4),
    "eval": (0, 1, 2, 3, 4, 7, 8),
    "bench": (0, 1, 2, 3, 4, 8),
}

# Click's type names, as click's own help spells them.
_KINDS: dict[object, str] = {int: "INTEGER", float: "FLOAT", Path: "PATH", str: "TEXT"}


def _kind(param: Any) -> str:
    """INTEGER, FLOAT, PATH or TEXT for an option's annotation (``list[X]``, ``X | None``: X)."""
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", str)
    while get_args(annotation):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if get_origin(annotation) is Literal or not inner:
            return "TEXT"
        annotation = inner[0]
    return _KINDS.get(annotation, "VALUE")


def exit_codes_text(name: str) -> str:
    """``Exit codes: 0 success, 1 ...`` for command ``name``."""
    codes = EXIT_CODES.get(name, tuple(_MEANINGS))
    return "Exit codes: " + ", ".join(f"{c} {_MEANINGS[c]}" for c in codes) + "."


def apply(group: Any) -> Any:
    """Apply the conventions to ``group`` (a Click group, as Typer builds it) and return it."""
    commands: dict[str, Any] = group.commands
    ordered = sorted(
        commands,
        key=lambda n: (COMMAND_ORDER.index(n) if n in COMMAND_ORDER else len(COMMAND_ORDER), n),
    )
    group.commands = {name: commands[name] for name in ordered}
    for command in (group, *group.commands.values()):
        _params(command)
    for name, command in group.commands.items():
        _exit_codes(name, command)
    return group


def _params(command: Any) -> None:
    for param in command.params:
        if param.param_type_name == "argument":
            _argument(param)
            continue
        if param.param_type_name != "option":
            continue
        shorts = {o[1:] for o in param.opts if len(o) == 2 and o[0] == "-" and o[1] != "-"}
        long_twins = [o for o in param.opts if o.startswith("--") and o[2:] in shorts]
        if long_twins and len(param.opts) > len(long_twins):
            param.opts = [o for o in param.opts if o not in long_twins]
        if not param.is_flag and not param.count and not param.metavar:
            param.metavar = _kind(param)


def _argument(param: Any) -> None:
    """``INDEX`` in the usage line and the Arguments list (Typer writes ``{index}``, ``<path>``)."""
    name = param.metavar or (param.name or "value").upper()
    if param.nargs != 1 and not name.endswith("..."):
        name += "..."
    param.metavar = name
    usage = name if param.required else f"[{name}]"
    # Typer's own usage and type strings are methods: an instance attribute replaces them for
    # this parameter only (the parsing is untouched).
    param._usage_display_name = lambda: usage
    param.display_type_rich = lambda *args, **kwargs: ""


def _exit_codes(name: str, command: Any) -> None:
    text = (command.help or "") + (command.epilog or "")
    if "exit codes:" in text.lower():
        return  # the command documents its own
    line = exit_codes_text(name)
    command.epilog = f"{command.epilog}\n\n{line}" if command.epilog else line
