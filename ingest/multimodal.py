"""Image parts of added messages: described by a vision-capable model when one is configured
(settings.vision_llm, or `vision_llm=` on Memory), kept as text with a reference to the image.

Accepted parts (OpenAI content-part format and LangChain's standard blocks): {"type": "image_url",
"image_url": {"url": URL or data:...;base64,...}} (or "image_url": "..."), {"type": "image", "url"|"base64"|
"data", "mime_type"?}; mem0 sends one such part as the whole `content`. Each image becomes text in its
message: "[image <ref>] <description>" when read, "[image <ref>: not read (<why>)]" otherwise, and the add
result carries a warning for every image not read. The reference is the URL itself, or for inline data
"inline:<mime>;sha256:<first 16 hex>" (the bytes are not stored). Every memory of that add keeps the
references in metadata["images"]. Nothing here raises on an image: a failing vision call is a warning.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from memoryx.models.llm_io import message_text

log = logging.getLogger(__name__)

IMAGE_TYPES = ("image_url", "image", "input_image")
DESCRIBE_PROMPT = ("Describe this image for a long-term memory system in two or three factual sentences: what "
                   "it shows, any readable text, people, places and objects. No preamble.")
NO_VISION = "no vision model is configured (MEMORYX_VISION_LLM)"


def _url_of(part: dict) -> str | None:
    value = part.get("image_url") if part.get("type") in ("image_url", "input_image") else None
    if isinstance(value, dict):
        value = value.get("url")
    if value is None:
        value = part.get("url")
    if value is None and (part.get("base64") or part.get("data")):
        value = f"data:{part.get('mime_type') or 'image/png'};base64,{part.get('base64') or part.get('data')}"
    return value if isinstance(value, str) and value.strip() else None


def image_ref(url: str) -> str:
    """A short, stable reference: the URL, or the hash of inline data (never the data itself)."""
    if not url.startswith("data:"):
        return url
    head, _, payload = url.partition(",")
    mime = head[5:].split(";")[0] or "image"
    try:
        raw = base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError):
        raw = payload.encode()
    return f"inline:{mime};sha256:{hashlib.sha256(raw).hexdigest()[:16]}"


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in IMAGE_TYPES


def has_images(messages: Any) -> bool:
    if not isinstance(messages, (list, dict)):
        return False
    for m in messages if isinstance(messages, list) else [messages]:
        content = m.get("content") if isinstance(m, dict) else None
        parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else []
        if any(is_image_part(p) for p in parts):
            return True
    return False


def describe(vision_llm: Any, url: str) -> str:
    answer = vision_llm.invoke([SystemMessage(content=DESCRIBE_PROMPT), HumanMessage(content=[
        {"type": "text", "text": "Describe the image."}, {"type": "image_url", "image_url": {"url": url}}])])
    text = message_text(answer).strip()
    if not text:
        raise ValueError("the vision model returned no description")
    return " ".join(text.split())


def read_images(messages: Any, vision_llm: Any = None) -> tuple[Any, list[str], list[str]]:
    """(messages with every image part turned into text, image references, warnings). Messages without
    images are returned as given."""
    if not has_images(messages):
        return messages, [], []
    single = isinstance(messages, dict)
    refs: list[str] = []
    warnings: list[str] = []
    out = []
    for m in [messages] if single else messages:
        content = m.get("content") if isinstance(m, dict) else None
        parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else None
        if parts is None or not any(is_image_part(p) for p in parts):
            out.append(m)
            continue
        texts = []
        for part in parts:
            if not is_image_part(part):
                text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and text.strip():
                    texts.append(text)
                continue
            url = _url_of(part)
            if url is None:
                warnings.append("an image part without a URL or data was skipped")
                continue
            ref = image_ref(url)
            refs.append(ref)
            why = NO_VISION if vision_llm is None else None
            if vision_llm is not None:
                try:
                    texts.append(f"[image {ref}] {describe(vision_llm, url)}")
                except Exception as exc:  # noqa: BLE001 - an unreadable image never fails the add
                    log.warning("vision model could not describe image %s: %s", ref, exc)
                    why = f"the vision model failed: {type(exc).__name__}: {str(exc)[:200]}"
            if why:
                texts.append(f"[image {ref}: not read ({why})]")
                warnings.append(f"image {ref} was not read: {why}")
        out.append({**m, "content": "\n".join(texts)})
    return (out[0] if single else out), refs, warnings
