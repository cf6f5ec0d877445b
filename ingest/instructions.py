"""Custom instructions of an add run: what the extraction and judge prompts are told, and the
rules that hold whatever the model answered.

- `prompt_section` appends the project's includes / excludes / free instructions / custom categories to the
  extraction prompt (ours or the project's own).
- `apply_excludes` enforces `excludes` after extraction, deterministically. What it does: the excludes text
  is split into topics (on commas, semicolons, new lines, " and ", " or ", 、，；); each topic's own words
  (three letters or more, filler such as "no", "any", "data", "information" removed; CJK runs whole) are its
  keywords, plus the words of the built-in lexicon when the topic names one of its categories (health,
  finance, religion, politics, sexuality, contact details: `LEXICON`). A fact whose text contains a keyword
  (Latin: at the start of a word, case-insensitive, so "diabet" catches "diabetic"; CJK: as a substring)
  is dropped, and the judgment record names the topic and the keyword.
  What it does not catch: a fact about an excluded topic that uses none of the keywords (a paraphrase such
  as "User's blood sugar runs high" for "health" is caught only because "blood sugar" is in the lexicon;
  "User's knee hurts" is not), lexicon words in languages other than English, Chinese and Japanese, and
  topics that are not in the lexicon and whose own words do not appear. It over-catches facts that mention
  a keyword in passing ("User has no allergies" is dropped for "health"). The model is asked first; this
  rule is the floor.
- `assign_categories` keeps the model's categories that are among the custom ones; a fact it left without
  one gets every custom category whose name or description words it contains (the offline model never
  assigns categories, so this rule is what it gets).
"""

from __future__ import annotations

import re

# Built-in topics: a topic of `excludes` naming one of the keys (or an alias) also brings its words.
LEXICON: dict[str, tuple[str, ...]] = {
    "health": ("health", "medical", "medicine", "medication", "doctor", "hospital", "clinic", "illness", "ill",
               "sick", "disease", "diagnos", "symptom", "allerg", "diabet", "cancer", "asthma", "depress",
               "anxiety", "therap", "prescri", "pregnan", "surgery", "injur", "blood pressure", "blood sugar",
               "insulin", "migraine", "mental", "健康", "病", "医", "药", "过敏", "糖尿", "病気", "病院", "薬",
               "アレルギー"),
    "finance": ("bank", "salary", "income", "debt", "loan", "credit card", "mortgage", "account number",
                "invest", "tax", "工资", "银行", "贷款", "給料", "銀行", "借金"),
    "religion": ("religio", "church", "mosque", "temple", "synagogue", "pray", "faith", "christian", "muslim",
                 "jewish", "hindu", "buddhis", "宗教", "信仰"),
    "politics": ("politic", "vote", "voted", "election", "party member", "democrat", "republican", "政治", "选举"),
    "sexuality": ("sexual", "gay", "lesbian", "bisexual", "transgender", "性取向"),
    "contact": ("phone", "email", "e-mail", "address", "passport", "social security", "电话", "邮箱", "地址",
                "電話", "住所"),
}
_ALIASES = {"medical": "health", "wellness": "health", "money": "finance", "financial": "finance",
            "finances": "finance", "religious": "religion", "political": "politics", "sexual": "sexuality",
            "personal identifiers": "contact", "pii": "contact", "健康": "health", "医疗": "health"}
_FILLER = {"no", "not", "never", "any", "all", "data", "information", "info", "details", "detail", "about",
           "related", "topics", "topic", "stuff", "the", "user", "user's", "users", "personal", "things",
           "don't", "dont", "store", "keep", "remember", "save", "anything", "mentions", "with", "for"}
_SPLIT = re.compile(r"[,;\n、，；]|\band\b|\bor\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+|[\u3040-\u30ff\u3400-\u9fff]+")


def _topics(excludes: str) -> list[str]:
    return [t.strip(" .") for t in _SPLIT.split(excludes or "") if t.strip(" .")]


def topic_keywords(topic: str) -> list[str]:
    """The keywords of one exclude topic: its own content words, plus the lexicon's when it names a category."""
    words = [w.lower() for w in _WORD.findall(topic)]
    own = [w for w in words if w not in _FILLER and (len(w) >= 3 or not w.isascii())]
    keys: list[str] = list(own)
    for w in [topic.lower().strip(), *words]:
        category = w if w in LEXICON else _ALIASES.get(w)
        if category:
            keys.extend(LEXICON[category])
    return list(dict.fromkeys(keys))


def _contains(text: str, keyword: str) -> bool:
    if keyword.isascii():
        return re.search(r"(?<![A-Za-z])" + re.escape(keyword), text, re.I) is not None
    return keyword in text


def excluded_by(text: str, excludes: str | None) -> tuple[str, str] | None:
    """(topic, keyword) of the first exclude topic the text matches, or None."""
    for topic in _topics(excludes or ""):
        for keyword in topic_keywords(topic):
            if _contains(text, keyword):
                return topic, keyword
    return None


def apply_excludes(facts: list[dict], excludes: str | None) -> tuple[list[dict], list[dict]]:
    """(kept facts, dropped facts with the topic and keyword that dropped them)."""
    if not excludes:
        return facts, []
    kept, dropped = [], []
    for fact in facts:
        hit = excluded_by(fact["text"], excludes)
        if hit is None:
            kept.append(fact)
        else:
            dropped.append({"text": fact["text"], "owner": fact.get("owner", "user"), "exclude": hit[0],
                            "keyword": hit[1]})
    return kept, dropped


def exclusion_notes(dropped: list[dict]) -> list[str]:
    return [f"fact {d['text']!r} dropped by the exclude rule: topic {d['exclude']!r} (keyword {d['keyword']!r})"
            for d in dropped]


def _category_keywords(name: str, description: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(f"{name.replace('_', ' ')} {description}")]
    return list(dict.fromkeys(w for w in words if w not in _FILLER and (len(w) >= 4 or not w.isascii())))


def assign_categories(facts: list[dict], categories: dict[str, str] | None) -> list[dict]:
    """Facts with `categories` (a list of custom category names); see the module docstring."""
    if not categories:
        return facts
    keywords = {name: _category_keywords(name, desc) for name, desc in categories.items()}
    out = []
    for fact in facts:
        given = [c for c in fact.get("categories") or [] if c in categories]
        if not given:
            given = [name for name, keys in keywords.items() if any(_contains(fact["text"], k) for k in keys)]
        out.append({**fact, "categories": given})
    return out


def prompt_section(instructions: dict) -> str:
    """The project's instructions, appended to the extraction prompt ("" when there are none)."""
    lines = []
    if instructions.get("includes"):
        lines.append(f"- Remember in particular: {instructions['includes']}")
    if instructions.get("excludes"):
        lines.append(f"- NEVER extract facts about: {instructions['excludes']}. Leave such facts out of your answer.")
    if instructions.get("custom_instructions"):
        lines.append(f"- {instructions['custom_instructions']}")
    categories = instructions.get("categories")
    if categories:
        lines.append('- For each fact also give "categories": a list of the names below that apply ([] if none):')
        lines.extend(f"    {name}: {desc}" if desc else f"    {name}" for name, desc in categories.items())
    return ("\nProject instructions (they override the rules above):\n" + "\n".join(lines) + "\n") if lines else ""


def group_by_category(memories: list[dict]) -> dict[str, list[dict]]:
    """{category name: memories} over the custom categories (metadata.categories), else the built-in one."""
    groups: dict[str, list[dict]] = {}
    for m in memories:
        names = list((m.get("metadata") or {}).get("categories") or []) or [m.get("category") or "uncategorized"]
        for name in names:
            groups.setdefault(name, []).append(m)
    return groups
