"""A weekday or a time of day named in one language finds the memory saying it in another
(memoryx.search.time_words)."""

from __future__ import annotations

from memoryx.search.time_words import time_keywords


def test_the_other_words_of_a_day_or_a_time_of_day():
    assert time_keywords("What sport do I play on Fridays?") == ["星期五", "周五", "礼拜五", "金曜"]
    assert "sunday" in time_keywords("我星期天做什么？") and "日曜" in time_keywords("我星期天做什么？")
    assert "早上" in time_keywords("What do I drink in the morning?")
    assert "saturday" in time_keywords("土曜日に何をしますか？")
    assert time_keywords("Where do I live?") == [] and time_keywords("我住在哪里？") == []


def test_an_english_question_finds_the_japanese_habit(tmp_path):
    """Added as said: asked in English about a habit said in Japanese, the Japanese statement comes first."""
    from memoryx.api.memory import Memory
    from tests.support import shared_embeddings

    said = [("2024-01-08", "Training for a triathlon in September!"),
            ("2024-03-01", "Switched teams at work, I'm on the mobile app team now."),
            ("2024-06-10", "毎週金曜日にサッカーをしています。"),
            ("2024-08-02", "Finished the triathlon in 2:48!")]
    with Memory(data_dir=tmp_path, graph_backend="none", embeddings=shared_embeddings()) as m:
        for day, text in said:
            m.add([{"role": "user", "content": text, "timestamp": f"{day}T19:00:00+00:00"}], user_id="j", infer=False)
        found = m.search("What sport do I play on Fridays?", user_id="j", limit=3,
                         now="2025-01-20T12:00:00+00:00")["results"]
    assert found[0]["memory"] == "毎週金曜日にサッカーをしています。"
