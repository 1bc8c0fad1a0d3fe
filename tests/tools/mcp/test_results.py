"""Conversion of MCP results (SDK models) to tool_result content, and the output cap."""

from __future__ import annotations

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from tools.mcp.manager import McpServerView, format_servers
from tools.mcp.results import convert_result, max_output_tokens


def test_text_blocks_join_and_errors_keep_the_server_text() -> None:
    result = CallToolResult(
        content=[TextContent(type="text", text="one"), TextContent(type="text", text="two")]
    )
    assert convert_result(result, token_limit=100).content == "one\n\ntwo"
    failed = CallToolResult(content=[TextContent(type="text", text="bad thing")], is_error=True)
    out = convert_result(failed, token_limit=100)
    assert out.is_error and out.content == "bad thing"


def test_resources_images_audio_and_links() -> None:
    png = "iVBORw0KGgo="
    result = CallToolResult(
        content=[
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///a.txt", text="file text"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///p.png", mime_type="image/png", blob=png),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///x.bin", mime_type="application/zip", blob="AAAA"
                ),
            ),
            ImageContent(type="image", data="AAAA", mime_type="image/tiff"),
            AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            ResourceLink(type="resource_link", name="doc", uri="https://x/doc", description="d"),
        ]
    )
    content = convert_result(result, token_limit=1000).content
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": "file text"}
    assert content[1]["type"] == "image" and content[1]["source"]["data"] == png
    texts = [b["text"] for b in content if b["type"] == "text"]
    assert "[Binary resource file:///x.bin (application/zip), 3 bytes, not shown]" in texts
    assert "[Image of unsupported type image/tiff, not shown]" in texts
    assert "[Audio content (audio/wav), not shown]" in texts
    assert "[Resource link: doc <https://x/doc>] d" in texts


def test_structured_content_only_when_there_is_no_text() -> None:
    both = CallToolResult(
        content=[TextContent(type="text", text="7")], structured_content={"result": 7}
    )
    assert convert_result(both, token_limit=100).content == "7"
    only = CallToolResult(content=[], structured_content={"result": 7})
    assert convert_result(only, token_limit=100).content == '{"result": 7}'
    assert convert_result(CallToolResult(content=[]), token_limit=100).content == ""


def test_cap_cuts_text_across_blocks_and_keeps_images() -> None:
    image = ImageContent(type="image", data="AAAA", mime_type="image/png")
    result = CallToolResult(
        content=[
            TextContent(type="text", text="a" * 30),
            image,
            TextContent(type="text", text="b" * 30),
        ]
    )
    out = convert_result(result, token_limit=10)  # 40 chars
    assert out.truncated and isinstance(out.content, list)
    assert out.content[0]["text"] == "a" * 30 and out.content[1]["type"] == "image"
    assert out.content[2]["text"].startswith("b" * 10 + "\n\n[OUTPUT TRUNCATED - exceeded 10 token")
    assert "b" * 11 not in out.content[2]["text"]
    wide = convert_result(result, token_limit=10, max_chars=1000)
    assert not wide.truncated


def test_max_output_tokens_from_env() -> None:
    assert max_output_tokens({}) == 25_000
    assert max_output_tokens({"MAX_MCP_OUTPUT_TOKENS": "500"}) == 500
    assert max_output_tokens({"MAX_MCP_OUTPUT_TOKENS": "lots"}) == 25_000
    assert max_output_tokens({"MAX_MCP_OUTPUT_TOKENS": "-3"}) == 25_000


def test_format_servers() -> None:
    views = [
        McpServerView("demo", "project", "stdio", "connected", 3, None, 0.51, "/l/demo.log"),
        McpServerView("x", "user", "stdio", "failed", 0, "did not answer", 30.0, "/l/x.log"),
        McpServerView("y", "project", "?", "needs approval", 0, None, None, None),
    ]
    text = format_servers(views)
    assert "demo (project, stdio): connected, 3 tool(s), 0.51 s" in text
    assert "x (user, stdio): failed — did not answer" in text
    assert "y (project, ?): needs approval" in text
    assert "No MCP servers configured" in format_servers([])
