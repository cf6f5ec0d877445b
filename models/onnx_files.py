"""The ONNX encoder cache's files: their digest, the stamp that lets a process skip re-hashing a file already
verified (`<stem>.verified`: the size, mtime and inode the digest was computed on), atomic writes."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger("memoryx.models.embedding_onnx")


def file_digest(path: Path) -> str:
    h = hashlib.blake2b(digest_size=20)  # faster than sha256 here; this is corruption, not tamper, detection
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stamp_path(onnx_path: Path) -> Path:
    return onnx_path.with_suffix(".verified")


def _file_identity(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def stamp_matches(onnx_path: Path, digest: str | None) -> bool:
    """True when this very file (size, mtime, inode) was digested before and matched `digest`: hashing the
    90 MB graph at every process start cost ~0.15 s of each CLI command. A rewrite or truncation changes the
    identity and brings the full digest back; the probe vectors are still checked at every load."""
    try:
        stamp = json.loads(_stamp_path(onnx_path).read_text())
        return bool(digest) and stamp.get("digest") == digest and stamp.get("file") == _file_identity(onnx_path)
    except (OSError, ValueError, AttributeError):
        return False


def holds_digest(onnx_path: Path, digest: str | None) -> bool:
    """Whether the file holds the bytes `digest` names: its stamp when the stamp still describes this very file,
    else the digest computed again (and stamped when it matches)."""
    if stamp_matches(onnx_path, digest):
        return True
    if not digest or file_digest(onnx_path) != digest:
        return False
    write_stamp(onnx_path, digest)
    return True


def write_stamp(onnx_path: Path, digest: str) -> None:
    try:
        atomic_write_text(_stamp_path(onnx_path), json.dumps({"digest": digest, "file": _file_identity(onnx_path)}))
    except OSError as exc:  # a read-only cache: the digest is then computed at every start
        log.debug("could not record the verified ONNX encoder %s: %s", onnx_path, exc)


def atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
