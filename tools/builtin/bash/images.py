"""Recognise image bytes on stdout (``cat shot.png``) and turn them into an image content block."""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["MAX_IMAGE_BYTES", "image_block", "sniff_image"]

MAX_IMAGE_BYTES = 5 * 1024 * 1024  # the API refuses bigger images; describe them instead


def sniff_image(head: bytes) -> str | None:
    """The media type if ``head`` starts with PNG, JPEG, GIF or WebP magic bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_block(data: bytes, media_type: str) -> dict[str, Any]:
    """An Anthropic base64 image content block."""
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
