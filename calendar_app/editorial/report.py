"""Printing findings: human (grouped by file, coloured on a terminal), GitHub workflow
annotations, or JSON."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TextIO

from ..model.findings import ERROR, Finding

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "path": "\033[1m", "dim": "\033[2m"}
_RESET = "\033[0m"


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get(
        "TERM") != "dumb"


def counts(findings: Iterable[Finding]) -> tuple[int, int]:
    errors = warnings = 0
    for f in findings:
        if f.severity == ERROR:
            errors += 1
        else:
            warnings += 1
    return errors, warnings


def human(findings: list[Finding], stream: TextIO, prefix: str, checked: int,
          seconds: float) -> None:
    colour = use_colour(stream)

    def paint(kind: str, text: str) -> str:
        return f"{_COLOURS[kind]}{text}{_RESET}" if colour else text

    current = None
    for f in findings:
        if f.path != current:
            if current is not None:
                stream.write("\n")
            stream.write(paint("path", prefix + f.path) + "\n")
            current = f.path
        where = f"{f.line}:{f.column}" if f.column else f"{f.line}" if f.line else "-"
        stream.write(f"  {where:>7}  {paint(f.severity, f'{f.severity:<7}')}  {f.message}"
                     f"  {paint('dim', '[' + f.code + ']')}\n")
    errors, warnings = counts(findings)
    files = len({f.path for f in findings})
    if findings:
        stream.write("\n")
    if not findings:  # "0 errors in 0 files" read as if nothing had been checked
        stream.write(f"All {checked} file{'s' * (checked != 1)} checked: no errors, no "
                     f"warnings ({seconds:.2f} s)\n")
        return
    stream.write(f"{errors} error{'s' * (errors != 1)}, {warnings} warning"
                 f"{'s' * (warnings != 1)} in {files} file{'s' * (files != 1)} "
                 f"({checked} files checked in {seconds:.2f} s)\n")


def _escape(value: str, prop: bool = False) -> str:
    # The workflow-command escaping GitHub documents for messages and properties.
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


def github(findings: list[Finding], stream: TextIO, prefix: str) -> None:
    for f in findings:
        props = [f"file={_escape(prefix + f.path, True)}"]
        if f.line:
            props.append(f"line={f.line}")
        if f.column:
            props.append(f"col={f.column}")
        props.append(f"title={_escape(f.code, True)}")
        stream.write(f"::{f.severity} {','.join(props)}::{_escape(f.message)}\n")


def as_json(findings: list[Finding], stream: TextIO, prefix: str, checked: int) -> None:
    errors, warnings = counts(findings)
    doc = {"errors": errors, "warnings": warnings, "files_checked": checked,
           "findings": [dict(f.as_dict(), path=prefix + f.path) for f in findings]}
    json.dump(doc, stream, indent=2)
    stream.write("\n")
