"""argparse that takes flags only in full, and says which flag a mistyped one meant.

argparse matches a prefix of a flag as the flag (``--epoch`` is read as ``--epochs``),
silently: a typo of one flag could become another. `Parser` turns that off
(``allow_abbrev=False``) and explains what it did not recognise (`unknown_flag_message`),
with the usage of the command the flag was given to.

Example:
    >>> parser = Parser(prog="dgan")
    >>> _ = parser.add_argument("--epochs", type=int)
    >>> parser.parse_args(["--epochs", "3"]).epochs
    3
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence


class Parser(argparse.ArgumentParser):
    """argparse that takes flags only in full and says which flag a mistyped one meant.

    argparse would silently read ``--epoch`` as ``--epochs`` (prefix matching): a typo of
    one flag could become another. Here a flag that is not one is an error, shown with the
    usage of the command it was given to and the flag meant (`unknown_flag_message`).

    Example:
        >>> parser = Parser(prog="dgan train")
        >>> _ = parser.add_argument("--epochs", type=int)
        >>> parser.allow_abbrev
        False
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self.commands.get(getattr(parsed, "command", None) or "", self)
            parser.error(unknown_flag_message(extras, parser))
        return parsed

    def error(self, message: str):  # type: ignore[override]
        if self.commands and "invalid choice" in message:  # a mistyped command
            given = message.split("invalid choice: ", 1)[1].split(" ", 1)[0].strip("'")
            close = difflib.get_close_matches(given, list(self.commands), n=1)
            if close:
                message += f"; did you mean {close[0]!r}?"
        super().error(message)


def unknown_flag_message(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """What to say about the arguments ``parser`` did not recognise: each unknown flag with
    the flag it most likely meant.

    Example:
        >>> parser = Parser(prog="dgan train")
        >>> _ = parser.add_argument("--epochs"), parser.add_argument("--attributes")
        >>> unknown_flag_message(["--atributes", "a"], parser)
        'unrecognized argument --atributes (did you mean --attributes?)'
        >>> unknown_flag_message(["--epoch=3"], parser).split("?")[0]
        '--epoch is not a flag; did you mean --epochs'
    """
    flags = sorted(
        {s for action in parser._actions for s in action.option_strings if s.startswith("--")}
    )
    said, after_flag = [], False
    for extra in extras:
        if not extra.startswith("-") or extra == "-":
            if not after_flag:  # else most likely the unknown flag's value
                said.append(f"unexpected argument {extra!r}")
            after_flag = False
            continue
        name = extra.split("=", 1)[0]
        after_flag = "=" not in extra
        longer = [f for f in flags if f.startswith(name) and name.startswith("--")]
        if longer:
            said.append(
                f"{name} is not a flag; did you mean {' or '.join(longer[:3])}? (write flags "
                "in full: dgan does not guess a shortened one)"
            )
            continue
        meant = flags_meant(name, flags)
        said.append(
            f"unrecognized argument {name}"
            + (f" (did you mean {' or '.join(meant)}?)" if meant else "")
        )
    return "; ".join(said)


def flags_meant(name: str, flags: Sequence[str]) -> list[str]:
    """The flags of ``flags`` an unknown flag ``name`` most likely meant: those it is a
    whole word of (``--steps`` for ``--training-steps``), else the closest in spelling;
    none where nothing is near. Spelling is compared without the dashes: the ``--`` all
    flags share makes short names look alike (``--plan`` and ``--dp-delta``).

    Example:
        >>> flags = ["--training-steps", "--training-minutes", "--dp-delta", "--dry-run"]
        >>> flags_meant("--dryrun", flags), flags_meant("--steps", flags)
        (['--dry-run'], ['--training-steps'])
        >>> flags_meant("--plan", flags)
        []
    """
    bare = {flag.lstrip("-"): flag for flag in flags}
    word = name.lstrip("-")
    within = [flag for stem, flag in bare.items() if word in stem.split("-")]
    if within:
        return within[:3]
    close = difflib.get_close_matches(word, list(bare), n=1, cutoff=0.6)
    return [bare[close[0]]] if close else []
