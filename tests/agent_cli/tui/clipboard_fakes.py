"""Fake clipboard programs (``xclip``, ``wl-paste``, ``osascript``): real executables on PATH
that answer from files in their directory, and log each call to ``calls.log``."""

from __future__ import annotations

import io
import sys
from pathlib import Path

__all__ = ["fake_clipboard", "png"]

_SCRIPT = """#!{python}
import pathlib, sys, time
d = pathlib.Path(__file__).parent
args = sys.argv[1:]
with open(d / "calls.log", "a") as log:
    log.write(pathlib.Path(__file__).name + " " + " ".join(args) + "\\n")
if (d / "hang").exists():
    time.sleep(60)
image = d / "clip.png"
types = (d / "types").read_text() if (d / "types").exists() else ""
name = pathlib.Path(__file__).name
if name == "osascript":
    if image.exists():
        print("«data PNGf" + image.read_bytes().hex().upper() + "»")
        sys.exit(0)
    print("execution error: Can't make some data into the expected type. (-1700)", file=sys.stderr)
    sys.exit(1)
if "TARGETS" in args or "--list-types" in args:
    sys.stdout.write(types)
    sys.exit(0)
if image.exists():
    sys.stdout.buffer.write(image.read_bytes())
    sys.exit(0)
print("Error: target image/png not available", file=sys.stderr)
sys.exit(1)
"""


def png(width: int = 6, height: int = 4) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 200, 10)).save(buf, format="PNG")
    return buf.getvalue()


def fake_clipboard(bindir: Path, *names: str, image: bytes | None = None, types: str = "") -> Path:
    """``names`` as programs in ``bindir``, holding ``image`` (or only ``types``)."""
    bindir.mkdir(parents=True, exist_ok=True)
    for name in names:
        exe = bindir / name
        exe.write_text(_SCRIPT.format(python=sys.executable))
        exe.chmod(0o755)
    if image is not None:
        (bindir / "clip.png").write_bytes(image)
    (bindir / "types").write_text(types)
    return bindir
