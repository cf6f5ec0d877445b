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

from memoryx.core.text import CJK_CHAR, KANA, tokenize
from memoryx.search.current import STATEMENT_CHARS
from memoryx.search.relation_terms import HOME_WORDS, PEOPLE_CJK, PEOPLE_WORDS, cjk_words

TOP_HITS = 3


# the user's relation as a memory states it: a possessive ("User's dog ...", "my wife Priya ...", "our cat ..."),
# the user doing it ("I work as ...", "User lives in ...", "we moved to ...") or having it ("we adopted two
# cats"); in Chinese or Japanese, the user (用户 / 我 / ユーザー / 私) and a word of the relation (用户的狗, 我住在,
# ユーザーは東京に住んでいる)
_STATED_EN = re.compile(r"\b(?:user's|my|our)\s+(?:new\s+|old\s+|little\s+|older\s+|younger\s+)?(\w+)", re.I)
_DOING_EN = re.compile(r"\b(?:i|we|user)\s+(?:(?:now|just|currently|also|still|recently|finally)\s+)?(\w+)", re.I)
_OWNING_EN = re.compile(r"\b(?:i|we|user)\s+(?:(?:now|just|also|recently|finally)\s+)?(?:have|has|had|got|adopted|"
                        r"bought|own|owns|rescued)\s+(?:(?:a|an|the|two|three|four|some|new|little|second|another|twin|"
                        r"\d+)\s+)*(\w+)"
                        # ... or runs it: "I run a small bakery" (the word after the next one too)
                        r"|\b(?:i|we|user)\s+(?:(?:now|just|also|recently|finally)\s+)?(?:run|runs|opened|founded)\s+"
                        r"(?:(?:a|an|the|my|our|new|little)\s+)*(\w+(?:\s+\w+)?)", re.I)
# "Mississauga is home now", "home is Porto these days": the user's home, said without a possessive
# ... and "I'm now in a two-bed flat in Reading": the user in a dwelling
_HOME_IS = re.compile(r"\b[A-Z][\w'’-]+\s+is\s+(?:(?i:my|our)\s+)?home\b|^(?i:home)\s+is\s+(?:now\s+)?[A-Z]"
                      r"|\b(?i:i'm|i am|we're|we are|user is)\s+(?i:(?:now|finally|still)\s+)?(?i:living\s+)?in\s+"
                      r"(?i:a|an|the|our|my)\s+(?:[\w-]+\s+){0,3}?(?i:flat|house|apartment|condo|cottage|bungalow)\b")
_BEING_EN = re.compile(r"\b(?i:i'm|im|i am|user is)\s+(?:[\w'’-]+,?\s+){0,5}?(\w+)\s+(?i:at|in|for|with|on)\b")
# ... or as chats leave the user out: "moved to Leith", "living with Ruth now" (a verb opening the text or a clause)
_DONE_EN = re.compile(r"(?:^|[,;:!.()]\s*)(?:(?:just|finally|now|also)\s+)?([a-z]+(?:ing|ed)(?:\s+[a-z]+){0,2})\b",
                      re.I)
# ... or announced as chats do: "New job! I'm moving to a startup", "Got a new car!"
_NEW_EN = re.compile(r"(?:^|[.!?]\s+)(?i:(?:got|started|bought)\s+a\s+)?(?i:new)\s+(\w+)\s*!")
_SELF_CJK = re.compile("用户|我|ユーザー|私")
_ASKED_CJK = re.compile(r"(?:我的|我们的|私の)([\u3040-\u30ff\u4e00-\u9fff])")


def cjk_relation(query: str) -> set[str]:
    """The CJK words that state the relation a question names: its table words (我妹妹 -> 妹妹, 姐姐, sister's
    other words), and the first character after 我的 / 私の ("我的车" -> "车") for a relation outside the table."""
    out = cjk_words(query)
    m = _ASKED_CJK.search(query)
    if m:
        out.add(m.group(1))
    return out


def states_relation(text: str, tokens: set[str], cjk: set[str] | None = None) -> bool:
    """The memory's text states the user's relation the question names: "User's dog is called Biscuit" for
    "my dog" (tokens {"dog"}), "I work as a nurse" for "my job" ({"job", "work", ...}), "用户的狗叫旺财" for
    "我的狗" (cjk {"狗", "犬"}). Unlike the words the question shares with every memory ("name"), the
    possessive or the subject says whose."""
    if tokens and any(set(tokenize(m.group(m.lastindex or 1))) & tokens for rx in (_STATED_EN, _DOING_EN, _OWNING_EN)
                      for m in rx.finditer(text)):
        return True
    # a statement as chats type it, in a fact-sized text (a long chat turn has a clause opening on "working" or
    # "I'm ... at" on every topic): "moved out of the flat, living with Sam", "Mississauga is home now", "User is
    # zoe, 2nd year med student at edinburgh uni"
    if tokens and len(text) <= STATEMENT_CHARS and (
            any(set(tokenize(m.group(1))) & tokens for rx in (_DONE_EN, _BEING_EN, _NEW_EN) for m in rx.finditer(text))
            or (tokens & HOME_WORDS and _HOME_IS.search(text))):
        return True
    return bool(cjk) and _states_cjk(text, cjk)


_CJK_CLAUSE_END = re.compile(r"[，。,.！!？?、；;]")
_CJK_TOPIC_SPLIT = re.compile(r"[，。,.！!？?、；;：:]")


_PEOPLE_SET = frozenset(PEOPLE_CJK)
# a clause whose topic is someone or something else: "ケンは...", "東京は..." (a word, then は / が, before the verb)
_JA_OTHER_TOPIC = re.compile(r"^[^はがにで、。]{1,8}(?:は|が)(?!あり|い[るま])")


def _names(clause: str, word: str) -> bool:
    """The clause holds the word, not inside "Xの日" ("母の日": Mother's Day is no statement of the mother)."""
    return re.search(re.escape(word) + "(?!の日)", clause) is not None


_AFTER_PERSON = re.compile(r"は|が|の(?!日)|们|[\u4e00-\u9fff]")


def _opens_on(clause: str, cjk: set[str] | frozenset[str]) -> bool:
    """A clause opening on one of the user's people (of `cjk`), as Chinese and Japanese name family without 我的 /
    私の: "母は大阪に住んでいます", "双胞胎女儿在学钢琴" (the person, then は / が / の or the rest of the clause)."""
    head = next((w for w in PEOPLE_CJK if clause.startswith(w)), None)  # (the longest first)
    return head is not None and head in cjk and _AFTER_PERSON.match(clause, len(head)) is not None


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
        if rest[:1] in ("的", "の"):
            if any(rest[1:].startswith(w) for w in cjk):
                return True
        elif rest.startswith(PEOPLE_CJK) and not any(rest.startswith(w) for w in cjk):
            continue  # "用户岳母住在慕尼黑": the mother-in-law's home, not the user's
        elif any(w in _CJK_CLAUSE_END.split(rest, maxsplit=1)[0] for w in cjk):
            return True
    return False


# the user's own one: "User's husband", "my little sister", "our dog" (group 1: the word after the possessive)
_USERS_EN = r"(?i:user['’]s|my|our)\s+(?i:(?:new|old|little|older|younger|best)\s+)?(\w+)"
# "User's husband Karim", "Our dog is a labrador called Rocco", "my sister, Ana": the relation word, then the name
_PERSON_OF = re.compile(r"\b" + _USERS_EN
                        + r"(?:,?\s+|\s+(?i:is|was)\s+(?i:an?\s+)?(?:\w+\s+){0,2}?(?i:called|named)\s+)([A-Z][\w'’-]+)")
_OPENS_ON_USERS_EN = re.compile("^" + _USERS_EN)
_OPENS_ON_SELF_CJK = re.compile(f"^(?:{_SELF_CJK.pattern})(?:的|の)?")


def opens_on_someone(text: str) -> bool:
    """The memory opens on one of the user's people or pets: "User's daughter loves drawing", "用户女儿喜欢画画",
    "ユーザーの夫は...": what follows is theirs, not the user's."""
    m = _OPENS_ON_USERS_EN.match(text)
    if m and set(tokenize(m.group(1))) & PEOPLE_WORDS:
        return True
    m = _OPENS_ON_SELF_CJK.match(text)
    if m:
        return text[m.end():].startswith(PEOPLE_CJK)
    return _opens_on(text.strip(), _PEOPLE_SET)  # "父は北海道に住んでいます", "妈妈住在上海": named without 我的 / 私の


# the user beside them: "My wife and I moved to Leeds", "my sister came with me", "我和妹妹", "妹と私"
_WITH_USER = re.compile(r"\b(?:and|with)\s+(?:i|me|us)\b|\b(?:we|we're|we've|our|us)\b|和我|跟我|我们|と私|と僕", re.I)


def about_someone_else(text: str) -> bool:
    """The memory is a statement of one of the user's people, not of the user: "My dad lives in Kyoto", "My
    partner Chloe works as a paramedic" (`opens_on_someone`), unless the user is in it too ("My wife and I moved
    to Leeds")."""
    return opens_on_someone(text) and not _WITH_USER.search(text)


# "我老婆周敏是小学语文老师", "用户女儿朵朵今年五岁", "彼氏の健太は消防士で": the relation word, then a name of two or
# three characters, then what is said of them
_PERSON_OF_CJK = re.compile(r"(?:(?:用户|我|ユーザー|私)(?:的|の)?|^|(?<=[，,、。！!\s]))(" + "|".join(PEOPLE_CJK)
                            + r")(?:の)?([\u4e00-\u9fff\u30a0-\u30ff]{2,3}?)(?=是|在|说|今年|也|は|が|の|と|、|，|,|。|\s|$)")


def people_of(texts: list[str], tokens: set[str], cjk: set[str] = frozenset()) -> set[str]:
    """The names the memories give the relation asked about: "Karim" from "User's husband Karim drives a taxi"
    for "my husband", "周敏" from "我老婆周敏是小学语文老师" for "我老婆" (`cjk`: the relation's CJK words)."""
    names = {m.group(2).removesuffix("'s").removesuffix("’s") for text in texts for m in _PERSON_OF.finditer(text)
             if set(tokenize(m.group(1))) & tokens}
    if cjk:
        names |= {m.group(2) for text in texts for m in _PERSON_OF_CJK.finditer(text) if m.group(1) in cjk}
    return names


def about_person(text: str, names: set[str]) -> str | None:
    """The person of `names` the memory is a statement about, its subject ("Karim started his own removals
    business", "Karim's van broke down", "a gift for Karim, he's just been promoted", "周敏说她想学开车"); None:
    none of them."""
    head = re.match(r"[A-Z][\w-]+", text)
    if head and head.group(0) in names:
        return head.group(0)
    cjk_head = next((n for n in names if CJK_CHAR.match(n) and text.startswith(n)), None)
    if cjk_head:
        return cjk_head
    # ... or the subject of the clause after them: "I need a gift for Omar, he's just been promoted"
    for name in names:
        if re.search(rf"\b{re.escape(name)}\b[^.!?]{{0,40}}?,\s*(?i:he|she|they)(?:['’]s|['’]re|\s)", text):
            return name
    return None


# a question asking a name ("what's my dog's name", "what is my son called", 我女儿叫什么名字, 娘の名前は), and a
# memory giving one ("My dog is called Pepper", "User's son Callum ...", 我的狗叫旺财, 猫の名前はモチです)
_ASKS_NAME = re.compile(r"\b(?:name|names|called|named)\b|名字|叫什么|名前", re.I)
_GIVES_NAME = re.compile(r"\b(?i:called|named|name is|name's)\s+(?i:(?:him|her|it|them)\s+)?[A-Z]|叫[^什]|名前は")


def says_attribute(text: str, tokens: tuple[str, ...], cjk: tuple[str, ...]) -> bool:
    """The memory says the thing a question asks of one of the user's people (its birthday: "birthday", "生日",
    "誕生日"; where they live: "live", "住")."""
    return bool(tokens and set(tokenize(text)) & set(tokens)) or any(w in text for w in cjk)


def asks_name(query: str) -> bool:
    """The question asks what someone or something is called."""
    return bool(_ASKS_NAME.search(query))


def gives_name(text: str, tokens: set[str]) -> bool:
    """The memory names the one the relation is (it states the relation already): "My dog is called Pepper",
    "User's son Callum is seven" for "my son" (`tokens`), not "My dog loves the beach"."""
    return bool(_GIVES_NAME.search(text)) or bool(people_of([text], tokens))


# an entity named as someone of the user's ("用户岳母", "User's sister", "ユーザーの母"), not the user
_SELF_AND_MORE = re.compile(r"^(?i:(?:the\s+)?user['’]s)\s*\S|^(?:用户的?|我的?|ユーザーの?|私の?)[^\s的の]")


def someone_of_users(name: str) -> bool:
    """The graph entity is one of the user's people, named through the user ("用户岳母" lives in Munich: not the
    user's home), not the user ("User", "用户")."""
    return bool(_SELF_AND_MORE.match((name or "").strip()))


def names_query(relation: dict, tokens: set[str], cjk: set[str] | frozenset[str] = frozenset()) -> bool:
    """The relation's name or one of its ends says one of `tokens` ("has_dog" for "my dog") or holds one of the
    CJK words `cjk` ("ユーザーの夫" for 夫)."""
    text = " ".join(str(relation.get(k) or "").replace("_", " ") for k in ("relation", "source", "target"))
    return bool(tokens & set(tokenize(text))) or any(w in text for w in cjk)
