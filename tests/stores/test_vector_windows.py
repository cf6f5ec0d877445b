"""Long memory texts indexed in windows: a window found returns its memory once, at its best score, on every
backend; rewrites and deletes leave no stale window; counts and keyword IDF see memories only. And through
the public API with the real encoder: a detail deep inside a long chat turn is found."""

from __future__ import annotations

import pytest

from memoryx.stores.vectors import EdgeVectorStore, PgVectorStore, QdrantServerVectorStore
from memoryx.stores.vectors.chunks import MAX_CHUNKS, text_chunks
from tests.stores.test_vectors import ALICE, DIMS, mem, vec

LONG = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(200))  # ~8,000 characters


def test_windows_cover_the_rest_of_a_long_text():
    assert text_chunks("short text", 800) == [] and text_chunks(LONG, 0) == []
    assert text_chunks("x " * 450, 800) == []  # fits what the text's own vector reads
    windows = text_chunks(LONG, 800)
    assert 1 < len(windows) <= MAX_CHUNKS
    assert all(len(w) <= 1000 for w in windows)
    assert "topic 199." in windows[-1]  # the end is covered
    assert not windows[0].startswith("Sentence number 0 ")  # the start is the text's own vector's part
    assert all(w[0] == "S" for w in windows)  # cut at sentence boundaries here
    huge = text_chunks("word " * 40_000 + "finale", 800)  # wider windows, still a bounded number
    assert MAX_CHUNKS - 2 <= len(huge) <= MAX_CHUNKS and huge[-1].endswith("finale")
    cjk = "我今天去了图书馆借了一本关于历史的书。" * 60  # ~1,100 characters: long for CJK
    assert all(len(w) <= 260 for w in text_chunks(cjk, 800)) and text_chunks(cjk, 800)



def test_focus_windows_split_a_mid_length_text_from_its_start():
    turn = " ".join(f"Sentence {i} is about topic number {i}." for i in range(20))  # ~700 characters
    assert text_chunks(turn, 800) == []  # the encoder reads it whole: no windows past its start
    focus = text_chunks(turn, 800, 200)
    assert len(focus) > 3 and all(len(w) <= 250 for w in focus)
    assert focus[0].startswith("Sentence 0 ") and focus[-1].endswith("topic number 19.")
    assert text_chunks(turn[:240], 800, 200) == []  # within one and a quarter windows: its own vector suffices
    assert text_chunks(turn, 800, 0) == [] and text_chunks(turn, 0, 200) == []  # either switch turns them off
    assert text_chunks(turn, 800, 800) == []  # a focus as wide as the windows is no focus
    assert text_chunks(LONG, 800, 200) == text_chunks(LONG, 800)  # a long text keeps its wide windows
    cjk = "我今天去了图书馆借了一本关于历史的书。" * 10  # 190 characters: mid-length for CJK
    assert text_chunks(cjk, 800) == [] and all(len(w) <= 65 for w in text_chunks(cjk, 800, 200))
    assert len(text_chunks(cjk, 800, 200)) >= 3


@pytest.fixture(params=["edge", "qdrant-local", "pgvector"])
def store(request, tmp_path):
    from qdrant_client import QdrantClient

    if request.param == "edge":
        s = EdgeVectorStore(tmp_path / "qdrant", DIMS, chunk_chars=800)
    elif request.param == "pgvector":
        s = PgVectorStore(request.getfixturevalue("pgvector_url"), DIMS, prefix=f"w{tmp_path.name[-10:].lower()}",
                          chunk_chars=800)
    else:
        s = QdrantServerVectorStore(QdrantClient(path=str(tmp_path / "q")), DIMS, chunk_chars=800)
    yield s
    s.close()


def test_a_window_returns_its_memory_once_and_stale_windows_go(store):
    long_mem = mem(LONG + " zebra", vec(0, 0, 1), chunk_vectors=[vec(1, 0.1), vec(1, 0.05), vec(0, 1)])
    near = mem("beta beta", vec(1, 0.5))
    far = mem("gamma", vec(0, 1, 1))
    store.upsert_memories([long_mem, near, far])
    hits = store.search_memories(vec(1, 0), ALICE, limit=3)
    assert [h.id for h in hits] == [long_mem["id"], near["id"], far["id"]]  # one per memory, window's score
    assert hits[0].score == pytest.approx(vec(1, 0.05)[0], abs=1e-4)
    assert "chunk" not in hits[0].payload and hits[0].payload["text"].endswith("zebra")
    batch = store.search_memories_batch([vec(1, 0), vec(0, 1)], ALICE, limit=2)
    assert [[h.id for h in hs] for hs in batch] == [[long_mem["id"], near["id"]], [long_mem["id"], far["id"]]]
    assert store.count_memories(ALICE) == 3 and store.count_memories() == 3  # windows are not memories
    kw = store.keyword_search("zebra", ALICE, limit=5)
    assert [h.id for h in kw] == [long_mem["id"]]

    store.upsert_memories([{**long_mem, "chunk_vectors": [vec(0, 1)]}])  # rewritten: fewer windows
    hits = store.search_memories(vec(1, 0), ALICE, limit=3)
    assert [h.id for h in hits][:1] == [near["id"]]
    store.upsert_memories([{**long_mem, "chunk_vectors": []}])  # rewritten short: no window left
    assert store.search_memories(vec(0, 1), ALICE, limit=1)[0].id == far["id"]
    store.upsert_memories([{**long_mem, "chunk_vectors": [vec(1, 0)]}])
    store.delete_memories([long_mem["id"]])  # its windows go with it
    assert long_mem["id"] not in {h.id for h in store.search_memories(vec(1, 0), ALICE, limit=5)}
    assert store.count_memories(ALICE) == 2


def test_keyword_idf_counts_memories_not_windows(store):
    docs = [mem("apple pie", vec(1, 0)), mem("apple tart", vec(1, 0)), mem("plum cake", vec(0, 1))]
    store.upsert_memories(docs)
    before = {h.id: h.score for h in store.keyword_search("apple", ALICE, limit=5)}
    store.upsert_memories([{**docs[2], "chunk_vectors": [vec(0, 1)] * 6}])
    after = {h.id: h.score for h in store.keyword_search("apple", ALICE, limit=5)}
    assert after == pytest.approx(before)


FILLER = " ".join(f"Step {i}: stir the sauce gently and keep the heat low for a while." for i in range(60))
LONG_TURN = FILLER + " By the way, your passport renewal appointment is at the consulate on Friday at nine."
OTHER_TURNS = ["I like to travel to Spain in the summer.", "Can you recommend a good pasta sauce recipe?",
               "My appointment with the dentist was moved.", "The consulate website is slow today."]


# a question naming neither side of the chat (the long turn's own similarity decides), and one about the user
QUESTIONS = ("When is the passport renewal appointment?", "When is my passport renewal appointment?")


def _found(data, **settings) -> tuple[str, list[list[str]]]:
    """The long turn's id, and the ids each of QUESTIONS finds (three, the dense path) among it and the others.
    No neighbouring-turn context: these turns are not one conversation, and the long turn (which borrows none,
    being as long as a window) would be overtaken by short neighbours lending to each other."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    with Memory(data_dir=data, graph_backend="none", embeddings=shared_embeddings(),
                search_tuning={"context_weight": 0.0}, **settings) as m:
        added = m.add([{"role": "assistant", "content": LONG_TURN}], user_id="u", infer=False)
        m.add_many([{"messages": t, "user_id": "u"} for t in OTHER_TURNS], infer=False)
        return added["results"][0]["id"], [[r["id"] for r in m.search(q, user_id="u", limit=3, mode="vector")
                                            ["results"]] for q in QUESTIONS]


@pytest.mark.integration
@pytest.mark.xfail(strict=True, reason="the companion index embeds a memory's first 2,000 characters only, so its "
                   "opinion of a long turn is about the turn's start, and the fitted ranking weighs that opinion; "
                   "window vectors in the companion index would lift it (docs/architecture.md)")
def test_a_detail_deep_in_a_long_turn_is_found_with_the_companion_index_on(tmp_path):
    long_turn, (ids, _) = _found(tmp_path / "d", vector_chunk_chars=800)
    assert ids[:1] == [long_turn]


@pytest.mark.integration
def test_a_detail_deep_in_a_long_turn_is_found_through_the_api(tmp_path):
    for chars, found in ((800, True), (0, False)):
        # the companion index off, which reads a long turn's start only (the test above): what the windows do alone
        long_turn, (ids, mine) = _found(tmp_path / str(chars), vector_chunk_chars=chars, companion_vectors=False)
        assert (ids[:1] == [long_turn]) is found
        assert len(ids) == len(set(ids))
        if found:
            # about the user ("my"): the user's own turns lend each other context and the assistant's reply
            # borrows none (SearchTuning.context_role), so the reply that holds the answer ranks lower,
            # still within the three asked for
            assert long_turn in mine
