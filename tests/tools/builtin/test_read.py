"""Read: real files in tmp_path, through parse + validate + call."""

from __future__ import annotations

import base64
import io
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from permissions.types import ToolKind
from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
from tools.builtin.read import TOOLS, ReadOutput, read_tool
from tools.context import ToolUseContext, content_hash
from tools.result import ToolResult

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[3]


def make_pdf(pages: list[str]) -> bytes:
    """A minimal valid PDF with one line of Helvetica text per page ("" = blank page)."""
    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(n))}] "
        f"/Count {n} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
            f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


async def read(tmp_path: Path, **raw: object) -> tuple[str, tuple[ToolResult, ToolUseContext]]:
    ctx = make_ctx(tmp_path)
    result = await run_tool(read_tool, dict(raw), ctx)
    return content_text(read_tool, result), (result, ctx)


def test_contract() -> None:
    assert TOOLS == (read_tool,)
    assert read_tool.name == "Read"
    assert read_tool.max_result_size_chars == float("inf")
    assert read_tool.permission_kind is ToolKind.READ
    inp = read_tool.input_model.model_validate({"file_path": "/x"})
    assert read_tool.is_read_only(inp) and read_tool.is_concurrency_safe(inp)
    schema = read_tool.input_schema()
    assert schema["required"] == ["file_path"]
    assert set(schema["properties"]) == {"file_path", "offset", "limit", "pages"}


async def test_cat_n_format_and_record(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("import os\n\tindented\nlast")
    ctx = make_ctx(tmp_path)
    result = await run_tool(read_tool, {"file_path": str(f)}, ctx)
    assert not result.is_error
    assert content_text(read_tool, result) == "     1\timport os\n     2\t\tindented\n     3\tlast"
    rec = ctx.state.read_files.get(f)
    assert rec is not None and not rec.partial
    assert rec.content_hash == content_hash(f.read_bytes())
    assert rec.mtime_ns == f.stat().st_mtime_ns


async def test_relative_path_refused_and_tilde_backfilled(tmp_path: Path) -> None:
    text, (result, ctx) = await read(tmp_path, file_path="a.py")
    assert result.is_error and "absolute path" in text
    inp = read_tool.input_model.model_validate({"file_path": "~/x/../y.txt"})
    filled = read_tool.backfill_input(inp, ctx)
    assert filled.file_path == str(Path.home() / "y.txt")
    assert inp.file_path == "~/x/../y.txt"  # the original is kept
    assert read_tool.permission_paths(inp, ctx) == (Path.home() / "y.txt",)


async def test_default_limit_offset_and_limit(tmp_path: Path) -> None:
    f = tmp_path / "many.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    text, _ = await read(tmp_path, file_path=str(f))
    lines = text.split("\n")
    assert lines[0] == "     1\tline 1"
    assert lines[1999] == "  2000\tline 2000"
    assert "(Showing lines 1-2000 of 3000." in text
    text, _ = await read(tmp_path, file_path=str(f), offset=2999, limit=5)
    assert text == "  2999\tline 2999\n  3000\tline 3000"
    text, _ = await read(tmp_path, file_path=str(f), offset=10, limit=2)
    assert text == "    10\tline 10\n    11\tline 11"


async def test_long_line_cut(tmp_path: Path) -> None:
    f = tmp_path / "long.txt"
    f.write_text("x" * 5000 + "\nshort\n")
    text, _ = await read(tmp_path, file_path=str(f))
    first, second = text.split("\n")
    assert first == "     1\t" + "x" * 2000 + "… [line truncated: 5000 chars]"
    assert second == "     2\tshort"


async def test_partial_view_over_budget(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("".join(f"{i:05d} " + "y" * 93 + "\n" for i in range(1, 1501)))  # ~150 KB
    text, (result, ctx) = await read(tmp_path, file_path=str(f))
    assert not result.is_error
    assert "PARTIAL view: showing lines 1-" in text and " of 1500 (file too large" in text
    shown = int(text.split("showing lines 1-")[1].split(" ")[0])
    assert 500 < shown < 1500
    assert len(text) <= 25_000 * 4 + 200
    rec = ctx.state.read_files.get(f)
    assert rec is not None and rec.partial


async def test_range_over_budget_is_error(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("".join("z" * 199 + "\n" for _ in range(1000)))
    text, (result, ctx) = await read(tmp_path, file_path=str(f), offset=1, limit=1000)
    assert result.is_error
    assert text.startswith("File content (")
    assert "exceeds maximum allowed tokens (25000). Use offset and limit" in text
    tokens = int(text.split("(")[1].split(" ")[0])
    assert 51_000 < tokens < 53_000
    assert ctx.state.read_files.get(f) is None


async def test_empty_file_and_offset_past_eof(tmp_path: Path) -> None:
    f = tmp_path / "empty.txt"
    f.write_bytes(b"")
    text, (result, ctx) = await read(tmp_path, file_path=str(f))
    assert not result.is_error and "contents are empty" in text
    assert ctx.state.read_files.get(f) is not None
    g = tmp_path / "short.txt"
    g.write_text("a\nb\nc\n")
    text, _ = await read(tmp_path, file_path=str(g), offset=10)
    assert "shorter than the provided offset (10)" in text and "The file has 3 lines" in text


async def test_huge_sparse_file_with_limit_is_bounded(tmp_path: Path) -> None:
    f = tmp_path / "huge.log"
    with open(f, "wb") as fh:
        fh.write(b"".join(b"entry %d\n" % i for i in range(1, 2001)))
        fh.truncate(1 << 30)
    script = textwrap.dedent(
        f"""
        import asyncio, json, resource, sys
        sys.path.insert(0, {str(ROOT)!r})
        from tests.tools.builtin.file_tools_support import content_text, make_ctx, run_tool
        from tools.builtin.read import read_tool
        from pathlib import Path
        async def main():
            ctx = make_ctx(Path({str(tmp_path)!r}))
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            r = await run_tool(read_tool, {{"file_path": {str(f)!r}, "offset": 5, "limit": 3}}, ctx)
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            rec = ctx.state.read_files.get(Path({str(f)!r}))
            print(json.dumps({{"text": content_text(read_tool, r), "grew_kb": after - before,
                              "partial": rec.partial, "hash": rec.content_hash}}))
        asyncio.run(main())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=50, check=True
    )
    res = json.loads(out.stdout)
    assert res["text"] == "     5\tentry 5\n     6\tentry 6\n     7\tentry 7"
    assert res["grew_kb"] < 50_000  # far less than the 1 GB file
    assert res["partial"] is True and res["hash"] == ""  # too big to hash: not edit-ready


async def test_crlf_and_encodings(tmp_path: Path) -> None:
    f = tmp_path / "crlf.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    text, _ = await read(tmp_path, file_path=str(f))
    assert text == "     1\tone\n     2\ttwo"
    g = tmp_path / "latin.txt"
    g.write_bytes("café\nnaïve\n".encode("latin-1"))
    text, (result, _) = await read(tmp_path, file_path=str(g))
    assert text == "     1\tcafé\n     2\tnaïve"
    assert result.data.encoding == "latin-1"
    h = tmp_path / "bom.txt"
    h.write_bytes(b"\xef\xbb\xbfhello\n")
    text, _ = await read(tmp_path, file_path=str(h))
    assert text == "     1\thello"
    u = tmp_path / "u16.txt"
    u.write_bytes("héllo\nwörld\n".encode("utf-16"))
    text, (result, _) = await read(tmp_path, file_path=str(u))
    assert text == "     1\théllo\n     2\twörld"
    assert result.data.encoding.startswith("utf-16")


async def test_image_png_small_and_downscaled(tmp_path: Path) -> None:
    small = tmp_path / "small.png"
    Image.new("RGB", (40, 30), (255, 0, 0)).save(small)
    ctx = make_ctx(tmp_path)
    result = await run_tool(read_tool, {"file_path": str(small)}, ctx)
    blocks = read_tool.to_content(result.data)
    assert isinstance(blocks, list) and blocks[0]["type"] == "image"
    assert blocks[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[0]["source"]["data"]) == small.read_bytes()
    big = tmp_path / "screenshot.jpg"  # PNG bytes: the extension does not decide, bytes do
    Image.new("RGB", (4000, 2000), (10, 200, 30)).save(big, format="PNG")
    result = await run_tool(read_tool, {"file_path": str(big)}, ctx)
    content = read_tool.to_content(result.data)
    assert isinstance(content, list)
    block = content[0]
    assert block["source"]["media_type"] == "image/png"
    img = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    assert max(img.size) <= 1568 and img.size == (1568, 784)
    assert "downscaled to 1568x784" in content_text(read_tool, result)


async def test_pdf_pages(tmp_path: Path) -> None:
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(make_pdf(["Hello first page", "", "Third page text"]))
    text, (result, _) = await read(tmp_path, file_path=str(pdf))
    assert not result.is_error
    assert "--- Page 1 ---\nHello first page" in text
    assert "--- Page 2 ---\n(no extractable text)" in text
    assert "Third page text" in text
    text, _ = await read(tmp_path, file_path=str(pdf), pages="3")
    assert "Third page text" in text and "Hello" not in text
    text, (result, _) = await read(tmp_path, file_path=str(pdf), pages="5-6")
    assert result.is_error and "this PDF has 3 pages" in text
    text, (result, _) = await read(tmp_path, file_path=str(pdf), pages="1-25")
    assert result.is_error and "at most 20 pages" in text
    text, (result, _) = await read(tmp_path, file_path=str(pdf), pages="two")
    assert result.is_error and "Invalid pages" in text
    long_pdf = tmp_path / "long.pdf"
    long_pdf.write_bytes(make_pdf([f"page {i}" for i in range(1, 13)]))
    text, (result, _) = await read(tmp_path, file_path=str(long_pdf))
    assert result.is_error and "12 pages" in text and "pages parameter" in text
    text, _ = await read(tmp_path, file_path=str(long_pdf), pages="11-12")
    assert "page 11" in text and "page 12" in text and "page 10" not in text


async def test_notebook_cells_and_outputs(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print('hi')")
    png = io.BytesIO()
    Image.new("RGB", (4, 4)).save(png, format="PNG")
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hi\n"),
        nbformat.v4.new_output(
            "display_data", data={"image/png": base64.b64encode(png.getvalue()).decode()}
        ),
    ]
    md = nbformat.v4.new_markdown_cell("# Title")
    nb.cells = [md, code]
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nb))
    ctx = make_ctx(tmp_path)
    result = await run_tool(read_tool, {"file_path": str(path)}, ctx)
    blocks = read_tool.to_content(result.data)
    assert isinstance(blocks, list)
    text = content_text(read_tool, result)
    assert f'<cell id="{md.id}" type="markdown">\n# Title\n</cell>' in text
    assert f'<cell id="{code.id}" type="code" language="python">' in text
    assert "hi\n" in text
    assert any(b["type"] == "image" for b in blocks)
    assert ctx.state.read_files.get(path) is not None


async def test_directory_listing(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.txt").write_text("x")
    text, (result, _) = await read(tmp_path, file_path=str(tmp_path))
    assert not result.is_error
    assert isinstance(result.data, ReadOutput) and result.data.kind == "directory"
    assert text.endswith("b.txt\nsub/")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/stdin", "/proc/self/fd/0"])
async def test_devices_refused(tmp_path: Path, device: str) -> None:
    text, (result, _) = await read(tmp_path, file_path=device)
    assert result.is_error and "Cannot read" in text


async def test_fifo_and_socket_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    text, (result, _) = await read(tmp_path, file_path=str(fifo))
    assert result.is_error and "FIFO" in text
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        text, (result, _) = await read(tmp_path, file_path=str(sock_path))
        assert result.is_error and "socket" in text
    finally:
        sock.close()


async def test_binary_refused(tmp_path: Path) -> None:
    f = tmp_path / "blob.dat"
    f.write_bytes(b"abc\x00def" * 10)
    text, (result, _) = await read(tmp_path, file_path=str(f))
    assert result.is_error and "binary" in text
    g = tmp_path / "lib.so"
    g.write_text("looks like text")
    text, (result, _) = await read(tmp_path, file_path=str(g))
    assert result.is_error and "binary" in text


async def test_narrow_no_break_space_variant(tmp_path: Path) -> None:
    real = tmp_path / "Screenshot 2024-01-01 at 10.00.00\u202fAM.txt"
    real.write_text("found me\n")
    text, (result, _) = await read(
        tmp_path, file_path=str(tmp_path / "Screenshot 2024-01-01 at 10.00.00 AM.txt")
    )
    assert not result.is_error and text == "     1\tfound me"


async def test_missing_file_suggests_near_names(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("x")
    text, (result, _) = await read(tmp_path, file_path=str(tmp_path / "confg.yaml"))
    assert result.is_error and "does not exist" in text
    assert f"Did you mean {tmp_path / 'config.yaml'}?" in text


async def test_pages_on_text_file_is_error(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x\n")
    text, (result, _) = await read(tmp_path, file_path=str(f), pages="1")
    assert result.is_error and "only for PDF" in text


def test_render_call() -> None:
    inp = read_tool.input_model.model_validate({"file_path": "/a.py", "offset": 10, "limit": 5})
    assert read_tool.describe_call(inp) == "Read(/a.py · lines 10-14)"
