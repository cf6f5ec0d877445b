"""The data directory is private whatever the umask: every file 0600 (0700 if executable), every directory 0700
(SQLite, the vector segments, the graph server's files and secrets, checkpoints), also for a data directory
that an older version left readable to others."""

from __future__ import annotations

import os
import stat

import pytest

from memoryx import Memory


@pytest.fixture
def loose_umask():
    old = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(old)


def _loose(root) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames, ""]:
            path = os.path.join(dirpath, name) if name else dirpath
            if os.path.islink(path):
                continue
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if mode & 0o077:
                found.append(f"{oct(mode)} {path}")
    return found


@pytest.mark.parametrize("graph", ["none", "falkordb"])
def test_everything_under_the_data_dir_is_private(tmp_path, loose_umask, graph):
    data = tmp_path / "data"
    data.mkdir(mode=0o777)
    (data / "old-notes.log").write_text("left by an older version")
    os.chmod(data / "old-notes.log", 0o666)
    with Memory(data_dir=data, graph_backend=graph, checkpointer="sqlite") as m:
        m.add("Alice lives in Berlin and works at Acme", user_id="alice")
        m.purge(user_id="alice", compact=True)
        m.add("Bob likes tea", user_id="bob")
        assert _loose(data) == []
    assert _loose(data) == []
    files = [f for _, _, fs in os.walk(data) for f in fs]
    assert len(files) > 3, files


def test_a_read_command_on_a_new_data_dir_creates_it_private(tmp_path, loose_umask):
    """`memoryx list` (the SQL store alone, api/records.py) may be the first command in a data directory."""
    from memoryx.api.records import RecordReader
    from memoryx.settings import Settings

    reader = RecordReader(Settings(data_dir=tmp_path / "data"))
    try:
        assert reader.get_all(user_id="alice")["results"] == []
    finally:
        reader.close()
    assert (tmp_path / "data" / "memoryx.db").exists()
    assert _loose(tmp_path / "data") == []
