"""The query adapters (MEMORYX_QUERY_ADAPTER): the bundled MiniLM's and the companion encoder's questions move towards
the statements that answer them; stored vectors never change, so a kept store can be searched with them on or off."""

from __future__ import annotations

import numpy as np
import pytest

from memoryx.models.embedding_use import use_available
from memoryx.models.embeddings import make_companion_embeddings, make_embeddings
from memoryx.models.query_adapter import COMPANION_ADAPTER_FILE, adapter_matrix
from memoryx.settings import Settings

# invented chat turns and the questions a user later asks about them, sharing few words
PAIRS = [
    ("When did Maria start her pottery class?", "Maria: I signed up for a pottery class last Tuesday, so relaxing!"),
    ("What does Tom's sister do for a living?", "Tom: my sister finally got hired as a nurse at the kids' hospital."),
    ("Where did Alex go on vacation last summer?", "Alex: We spent two weeks hiking in the Swiss Alps in July."),
    ("What pet does Jenny have?", "Jenny: Biscuit, my golden retriever, chewed my shoes again this morning."),
    ("Why did Sam move to Chicago?", "Sam: I took the job offer in Chicago because the team works on climate data."),
    ("How many kids does Priya have?", "Priya: Between my three little ones and work, I barely sleep."),
]


def test_on_by_default_switched_off_by_the_setting_and_a_square_matrix_of_the_encoders_size():
    assert Settings().query_adapter is True
    assert make_embeddings(Settings()).query_adapter is not None
    assert make_embeddings(Settings(query_adapter=False)).query_adapter is None
    plain = make_embeddings(Settings(query_adapter=False))
    assert adapter_matrix().shape == (plain.dims, plain.dims)


def test_only_questions_are_adapted_and_stay_unit_vectors():
    plain, adapted = make_embeddings(Settings(query_adapter=False)), make_embeddings(Settings(query_adapter=True))
    docs = [s for _, s in PAIRS]
    assert np.allclose(plain.embed_documents(docs), adapted.embed_documents(docs))
    q_plain, q_adapted = np.array(plain.embed_query(PAIRS[0][0])), np.array(adapted.embed_query(PAIRS[0][0]))
    assert abs(np.linalg.norm(q_adapted) - 1.0) < 1e-5
    assert float(q_plain @ q_adapted) < 0.995  # it moved


def _encoders(companion: bool) -> tuple:
    """(plain, adapted) encoders of one kind, built as the package builds them."""
    if companion and not use_available():  # (found by path: importing nanoranker would load torch)
        pytest.skip("the companion encoder's packages are not installed")
    make = make_companion_embeddings if companion else make_embeddings
    return make(Settings(query_adapter=False)), make(Settings(query_adapter=True))


def test_the_companion_encoder_has_its_own_adapter_under_the_same_setting():
    plain, adapted = _encoders(companion=True)
    assert plain.query_adapter is None and adapted.query_adapter is not None
    assert adapter_matrix(COMPANION_ADAPTER_FILE).shape == (plain.dims, plain.dims) != adapter_matrix().shape
    docs = [s for _, s in PAIRS]
    assert np.allclose(plain.embed_documents(docs), adapted.embed_documents(docs))
    q_plain, q_adapted = np.array(plain.embed_query(PAIRS[0][0])), np.array(adapted.embed_query(PAIRS[0][0]))
    assert abs(np.linalg.norm(q_adapted) - 1.0) < 1e-5 and float(q_plain @ q_adapted) < 0.995


@pytest.mark.parametrize("companion", [False, True], ids=["minilm", "companion"])
def test_a_question_stands_further_above_the_statements_that_do_not_answer_it(companion):
    plain, adapted = _encoders(companion)
    D = np.array(plain.embed_documents([s for _, s in PAIRS]))

    def margins(emb) -> np.ndarray:
        S = np.array([emb.embed_query(q) for q, _ in PAIRS]) @ D.T
        others = np.where(np.eye(len(PAIRS), dtype=bool), -np.inf, S)
        return np.diag(S) - others.max(axis=1)

    m_plain, m_adapted = margins(plain), margins(adapted)
    assert (m_adapted > 0).all()  # each question still finds its own statement first
    assert m_adapted.mean() > m_plain.mean() + 0.02
