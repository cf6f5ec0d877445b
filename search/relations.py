"""Relations named by a question, found from its best hits.

"What's my dog's name?", "who is my manager?", "where do I live?": the memory that answers states a relation
of the user (User -has_dog-> Rex, User -lives_in-> Paris), while the memories that merely share words with the
question ("User's name is Sam") do not. The graph path walks one hop from the entities of the best keyword hits
(`TOP_HITS`, their relations read from the system of record) and keeps the relations whose name or ends say
the relation the question names (memoryx.search.relation_terms.relation_words: "dog" in "my dog's name", "live"
in "where do I live"): their memories are graph hits, whatever words they use, and gain the `relation_bonus` knob in ranking. This
runs for questions about the user's own life (memoryx.search.speakers), bounding its cost to them. Without a
graph (or when extraction made no relation of it), a memory whose text states the user's relation
(`states_relation`: "User's dog is called Biscuit", "用户的狗叫旺财") gains the same bonus, and so does a memory
about the person the relation is, by the name another memory gives them ("my husband": "User's husband Karim
drives a taxi" names him, so "Karim started his own removals business" is about him: `people_of`,
`about_person`). A question asking a name prefers, of those, the memory giving one (`gives_name`); one about the
user's own relation is not answered by a graph relation of one of their people ("用户岳母 住在 慕尼黑":
`someone_of_users`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from memoryx.core import lexicon
from memoryx.core.caseless import Caseless
from memoryx.core.text import CJK_CHAR, KANA, tokenize
from memoryx.search.current import STATEMENT_CHARS
from memoryx.search.relation_terms import HOME_WORDS, PEOPLE_CJK, PEOPLE_WORDS, cjk_words

TOP_HITS = 3


# the user's relation as a memory states it (group 1, or the last group that matched, is the relation word): a
# possessive ("User's dog ...", "my wife Priya ...", "our cat ..."), the user doing it ("I work as ...", "User lives
# in ...", "we moved to ...") or having it ("we adopted two cats", "I run a small bakery"); in Chinese or Japanese,
# the user (用户 / 我 / ユーザー / 私: lexicon table search.self) and a word of the relation (用户的狗, 我住在,
# ユーザーは東京に住んでいる)
_STATES = [Caseless(rx) for rx in lexicon.patterns("search.states_relation", flags=re.I)]
# ... or as chats leave the user out, in a fact-sized text: "moved to Leith", "living with Ruth now" (a verb opening
# the text or a clause), "I'm zoe, 2nd year med student at edinburgh uni", "New job! I'm moving to a startup"
_STATES_AS_CHATS_DO = lexicon.patterns("search.states_relation_as_chats_do")
# "Mississauga is home now", "home is Porto these days", "I'm now in a two-bed flat in Reading": the user's home,
# said without a possessive
_HOME_IS = lexicon.pattern("search.home_is")
_SELF_CJK = lexicon.compile("<@search.self>")
_POSSESSIVE = lexicon.table("search.possessive")  # 的, の
_ASKED_CJK = lexicon.compile(r"<@search.my>([\u3040-\u30ff\u4e00-\u9fff])")


def cjk_relation(query: str) -> set[str]:
    """The CJK words that state the relation a question names: its table words (我妹妹 -> 妹妹, 姐姐, sister's
    other words), and the first character after 我的 / 私の ("我的车" -> "车") for a relation outside the table."""
    out = cjk_words(query)
    m = _ASKED_CJK.search(query)
    if m:
        out.add(m.group(1))
    return out


# the relation words the patterns below capture are few ("live", "dog", "work", "have") and recur in every text: their
# keyword tokens are kept rather than tokenized again for each match (a search reads ~200 matches)
@lru_cache(maxsize=4096)
def _word_tokens(words: str) -> frozenset[str]:
    return frozenset(tokenize(words))


@lru_cache(maxsize=64)
def _word_starts(tokens: frozenset[str]) -> tuple[str, ...] | None:
    """What a lowered ASCII text holds when a part of it has one of `tokens` among its keyword tokens: a token's
    start (memoryx.core.text's stemming only cuts a word's end, or ends it in "y" for "-ies" / "-ied", so a token
    less a final "y" begins a word of the text). A token outside ASCII is never one of an ASCII text's. None: no
    such test (a token holding a digit may be a number read without its commas)."""
    if any(ch.isdigit() for t in tokens for ch in t):
        return None
    return tuple({t[:-1] if t.endswith("y") else t for t in tokens if t.isascii()})


def _may_name(text: str, tokens: set[str] | frozenset[str]) -> bool:
    """False when no part of `text` has one of `tokens` among its keyword tokens: the patterns' relation words need
    not be looked for. Most candidates of a search (~85 % on LongMemEval's chat turns) hold none of the words."""
    if not text.isascii():
        return True
    starts = _word_starts(frozenset(tokens))
    if starts is None:
        return True
    low = text.lower()
    return any(start in low for start in starts)


def states_relation(text: str, tokens: set[str], cjk: set[str] | None = None) -> bool:
    """The memory's text states the user's relation the question names: "User's dog is called Biscuit" for
    "my dog" (tokens {"dog"}), "I work as a nurse" for "my job" ({"job", "work", ...}), "用户的狗叫旺财" for
    "我的狗" (cjk {"狗", "犬"}). Unlike the words the question shares with every memory ("name"), the
    possessive or the subject says whose."""
    if tokens and _may_name(text, tokens):
        if any(not _word_tokens(m.group(m.lastindex or 1)).isdisjoint(tokens)
               for rx in _STATES for m in rx.finditer(text)):
            return True
        # a statement as chats type it, in a fact-sized text (a long chat turn has a clause opening on "working"
        # or "I'm ... at" on every topic): "moved out of the flat, living with Sam", "User is zoe, 2nd year med
        # student at edinburgh uni"
        if len(text) <= STATEMENT_CHARS and any(not _word_tokens(m.group(1)).isdisjoint(tokens)
                                                for rx in _STATES_AS_CHATS_DO for m in rx.finditer(text)):
            return True
    # ... or "Mississauga is home now", in a fact-sized text
    if tokens and len(text) <= STATEMENT_CHARS and tokens & HOME_WORDS and _HOME_IS.search(text):
        return True
    return bool(cjk) and _states_cjk(text, cjk)


_CJK_CLAUSE_END = re.compile(r"[，。,.！!？?、；;]")
_CJK_TOPIC_SPLIT = re.compile(r"[，。,.！!？?、；;：:]")


_PEOPLE_SET = frozenset(PEOPLE_CJK)
# a clause whose topic is someone or something else: "ケンは...", "東京は..." (a word, then は / が, before the verb)
_JA_OTHER_TOPIC = lexicon.pattern("search.other_topic", "ja")


_DAY_OF = lexicon.alternation("search.day_of")  # "母の日": Mother's Day is no statement of the mother


def _names(clause: str, word: str) -> bool:
    """The clause holds the word, not inside "Xの日" (a day named after them)."""
    return re.search(re.escape(word) + f"(?!{_DAY_OF})", clause) is not None


_AFTER_PERSON = lexicon.pattern("search.after_person")  # は / が / の, 们, or the clause going on


def _opens_on(clause: str, cjk: set[str] | frozenset[str]) -> bool:
    """A clause opening on one of the user's people (of `cjk`), as Chinese and Japanese name family without 我的 /
    私の: "母は大阪に住んでいます", "双胞胎女儿在学钢琴" (the person, then は / が / の or the rest of the clause)."""
    if not clause.startswith(PEOPLE_CJK):  # one call for the ~110 words: most clauses open on none of them
        return False
    head = next(w for w in PEOPLE_CJK if clause.startswith(w))  # (the longest first)
    return head in cjk and _AFTER_PERSON.match(clause, len(head)) is not None


def _states_cjk(text: str, cjk: set[str]) -> bool:
    """The user's relation in Chinese or Japanese: the user possessing it (用户的狗, ユーザーの犬: the word right
    after the possessive), or the user as the subject of a clause naming it (我住在上海, 用户妹妹下个月结婚,
    ユーザーは東京に住んでいる). "ユーザーの母は大阪に住んでいます" and "用户岳母住在慕尼黑" state the mother and
    the mother-in-law, not the user's home."""
    if not any(w in text for w in cjk):  # (each way of stating it holds one of the words)
        return False
    clauses = [c.strip() for c in _CJK_TOPIC_SPLIT.split(text) if c.strip()]
    if any(_opens_on(clause, cjk) for clause in clauses):
        return True
    # Japanese leaves the speaker out: a clause opening on no one else ("京都に引っ越しました") is the speaker's
    if KANA.search(text) and any(not _opens_on(clause, _PEOPLE_SET) and not _JA_OTHER_TOPIC.match(clause)
                                  and any(_names(clause, w) for w in cjk) for clause in clauses):
        return True
    for m in _SELF_CJK.finditer(text):
        rest = text[m.end():]
        if rest[:1] in _POSSESSIVE:
            if any(rest[1:].startswith(w) for w in cjk):
                return True
        elif rest.startswith(PEOPLE_CJK) and not any(rest.startswith(w) for w in cjk):
            continue  # "用户岳母住在慕尼黑": the mother-in-law's home, not the user's
        elif any(w in _CJK_CLAUSE_END.split(rest, maxsplit=1)[0] for w in cjk):
            return True
    return False


# the user's own one: "User's husband", "my little sister", "our dog" (group 1: the word after the possessive)
_OPENS_ON_USERS = lexicon.compile("^<@search.users_own>")
# "User's husband Karim", "Our dog is a labrador called Rocco", "my sister, Ana": the relation word, then the name
_PERSON_OF = lexicon.pattern("search.person_of")
_OPENS_ON_SELF_CJK = lexicon.compile("^<@search.self>(?:<@search.possessive>)?")


def opens_on_someone(text: str) -> bool:
    """The memory opens on one of the user's people or pets: "User's daughter loves drawing", "用户女儿喜欢画画",
    "ユーザーの夫は...": what follows is theirs, not the user's."""
    m = _OPENS_ON_USERS.match(text)
    if m and set(tokenize(m.group(1))) & PEOPLE_WORDS:
        return True
    m = _OPENS_ON_SELF_CJK.match(text)
    if m:
        return text[m.end():].startswith(PEOPLE_CJK)
    return _opens_on(text.strip(), _PEOPLE_SET)  # "父は北海道に住んでいます", "妈妈住在上海": named without 我的 / 私の


# the user beside them: "My wife and I moved to Leeds", "my sister came with me", "我和妹妹", "妹と私"
_WITH_USER = lexicon.matcher("search.with_user")


def about_someone_else(text: str) -> bool:
    """The memory is a statement of one of the user's people, not of the user: "My dad lives in Kyoto", "My
    partner Chloe works as a paramedic" (`opens_on_someone`), unless the user is in it too ("My wife and I moved
    to Leeds")."""
    return opens_on_someone(text) and not _WITH_USER.contains(text)


# "我老婆周敏是小学语文老师", "用户女儿朵朵今年五岁", "彼氏の健太は消防士で": the relation word, then a name of two or
# three characters, then what is said of them
_PERSON_OF_CJK = lexicon.compile(r"(?:<@search.self>(?:<@search.possessive>)?|^|(?<=[，,、。！!\s]))("
                                 + "|".join(map(re.escape, PEOPLE_CJK)) + r")(?:<@search.possessive:ja>)?"
                                 r"([\u4e00-\u9fff\u30a0-\u30ff]{2,3}?)(?=<@search.after_name>|[、，,。\s]|$)")


def people_of(texts: list[str], tokens: set[str], cjk: set[str] = frozenset()) -> set[str]:
    """The names the memories give the relation asked about: "Karim" from "User's husband Karim drives a taxi"
    for "my husband", "周敏" from "我老婆周敏是小学语文老师" for "我老婆" (`cjk`: the relation's CJK words)."""
    names = {m.group(2).removesuffix("'s").removesuffix("’s") for text in texts if _may_name(text, tokens)
             for m in _PERSON_OF.finditer(text) if not _word_tokens(m.group(1)).isdisjoint(tokens)}
    if cjk:  # (the relation word is one of `cjk`, so the text holds it)
        names |= {m.group(2) for text in texts if any(w in text for w in cjk)
                  for m in _PERSON_OF_CJK.finditer(text) if m.group(1) in cjk}
    return names


_CAPITALISED = re.compile(r"[A-Z][\w-]+")
_THEN_PRONOUN = lexicon.alternation("search.then_pronoun", "en")  # ", he's ...", ", she ..."


def about_person(text: str, names: set[str]) -> str | None:
    """The person of `names` the memory is a statement about, its subject ("Karim started his own removals
    business", "Karim's van broke down", "a gift for Karim, he's just been promoted", "周敏说她想学开车"); None:
    none of them."""
    head = _CAPITALISED.match(text)
    if head and head.group(0) in names:
        return head.group(0)
    cjk_head = next((n for n in names if CJK_CHAR.match(n) and text.startswith(n)), None)
    if cjk_head:
        return cjk_head
    # ... or the subject of the clause after them: "I need a gift for Omar, he's just been promoted"
    for name in names:
        if re.search(rf"\b{re.escape(name)}\b{_THEN_PRONOUN}", text):
            return name
    return None


# a question asking a name ("what's my dog's name", "what is my son called", 我女儿叫什么名字, 娘の名前は), and a
# memory giving one ("My dog is called Pepper", "User's son Callum ...", 我的狗叫旺财, 猫の名前はモチです)
_ASKS_NAME = lexicon.matcher("search.asks_name")
_GIVES_NAME = lexicon.pattern("search.gives_name")


def says_attribute(text: str, tokens: tuple[str, ...], cjk: tuple[str, ...]) -> bool:
    """The memory says the thing a question asks of one of the user's people (its birthday: "birthday", "生日",
    "誕生日"; where they live: "live", "住")."""
    return bool(tokens and set(tokenize(text)) & set(tokens)) or any(w in text for w in cjk)


def asks_name(query: str) -> bool:
    """The question asks what someone or something is called."""
    return _ASKS_NAME.contains(query)


def gives_name(text: str, tokens: set[str]) -> bool:
    """The memory names the one the relation is (it states the relation already): "My dog is called Pepper",
    "User's son Callum is seven" for "my son" (`tokens`), not "My dog loves the beach"."""
    return bool(_GIVES_NAME.search(text)) or bool(people_of([text], tokens))


# an entity named as someone of the user's ("用户岳母", "User's sister", "ユーザーの母"), not the user
_SELF_AND_MORE = lexicon.pattern("search.someone_of_users")


def someone_of_users(name: str) -> bool:
    """The graph entity is one of the user's people, named through the user ("用户岳母" lives in Munich: not the
    user's home), not the user ("User", "用户")."""
    return bool(_SELF_AND_MORE.match((name or "").strip()))


def names_query(relation: dict, tokens: set[str], cjk: set[str] | frozenset[str] = frozenset()) -> bool:
    """The relation's name or one of its ends says one of `tokens` ("has_dog" for "my dog") or holds one of the
    CJK words `cjk` ("ユーザーの夫" for 夫)."""
    text = " ".join(str(relation.get(k) or "").replace("_", " ") for k in ("relation", "source", "target"))
    return bool(tokens & set(tokenize(text))) or any(w in text for w in cjk)
