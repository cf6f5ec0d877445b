"""The relations of a person's life a question can name, each with the words that name it in English, Chinese
and Japanese.

"What's my job?" is answered by "I work as a nurse", "我的狗叫什么名字？" by "User's dog is called Biscuit",
"私はどこに住んでいますか？" by "I moved to Manchester": the question and the memory name one relation in
different words, or in different languages (the default encoder is English-only, so the dense path does not
bridge them). A question naming one of these relations searches the keyword path with all of its words
(`relation_keywords`) and gives the relation bonus to the memories that state it in any of them
(memoryx.search.relations). The table is a small closed vocabulary of family, home, work and everyday
belongings - what users ask a chat memory about themselves - not a list of words fitted to a benchmark.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memoryx.core import lexicon
from memoryx.core.text import CJK_CHAR, tokenize

# relation -> its words (lexicon table "search.relation": en.json, zh.json, ja.json); Latin words are matched as
# keyword tokens (stemmed), CJK words as substrings (Chinese in its simplified and traditional forms where they
# differ: 兒子, 媽媽, 醫生). "mother-in-law" has no English word: its tokens would be "mother"'s. "favourite" holds
# the verbs too: what someone likes best is said with them ("My husband loves football", "夫はサッカーが大好きです");
# "birthday" holds "turns" ("Mom turns 65 on ..."); "car" holds 一辆, "a" of a vehicle ("买了一辆特斯拉"); "health"
# the common chronic conditions, as a condition is said by its name ("I have asthma").
RELATIONS: dict[str, tuple[str, ...]] = dict(lexicon.groups("search.relation"))

# what a job is called ("Lucía is a dentist", "她是护士", "看護師です"): asked what one of the user's people does,
# a statement of them naming one of these says it without a word of the job relation. Common occupations, not a
# list fitted to a benchmark; read only as what is asked of a person (`attribute_words`), never as keywords
OCCUPATIONS = lexicon.table("search.occupation")

# the relations that are people or pets: a CJK memory opening on the user and one of them ("用户岳母住在慕尼黑")
# says what that one does, not the user
PEOPLE = frozenset(RELATIONS) - {"job", "home", "birthday", "car", "school", "allergy", "health", "favourite"}
PEOPLE_CJK = tuple(sorted({w for rel in PEOPLE for w in RELATIONS[rel] if CJK_CHAR.search(w)}, key=len, reverse=True))

PEOPLE_WORDS = frozenset(t for rel in PEOPLE for w in RELATIONS[rel] if not CJK_CHAR.search(w) for t in tokenize(w))

# relations the user holds one of at a time, a new statement replacing the last ("I moved to ..."); the others
# are people and pets, of whom each statement may say something else ("my son is 7", "my son does judo now")
ONE_AT_A_TIME = frozenset({"home", "job", "car", "school"})

_TOKENS = {rel: {t for w in words if not CJK_CHAR.search(w) for t in tokenize(w)} for rel, words in RELATIONS.items()}
_OCCUPATION_TOKENS = frozenset(t for w in OCCUPATIONS if not CJK_CHAR.search(w) for t in tokenize(w))
_OCCUPATION_CJK = frozenset(w for w in OCCUPATIONS if CJK_CHAR.search(w))
HOME_WORDS = frozenset(_TOKENS["home"]) | frozenset(w for w in RELATIONS["home"] if CJK_CHAR.search(w))
_CJK = {rel: tuple(w for w in words if CJK_CHAR.search(w)) for rel, words in RELATIONS.items()}
# an English question's relation (group 1 of each pattern): the noun after "my" / "our" (past a word saying which
# one: "my current job"), the verb after "do I", the thing named before "do I" ("which car do we drive"), a
# question inside a request ("(do you know) where I live"), something done by one of the user's people ("where
# does my mother live"); with `people`, of someone the question names ("Alex's job", "where does Marta live")
_ASKED = lexicon.patterns("search.asked_relation", flags=re.I)
_ASKED_OF_SOMEONE = lexicon.patterns("search.asked_relation_of_someone")
# "my son's birthday": the birthday too, when it is a relation of the table ("my dog's name": not "name")
_POSSESSED_CHAIN = lexicon.pattern("search.asked_chain", flags=re.I)
# "what do I do (for a living)?", "what does Alex do?": the job
_WHAT_ONE_DOES = lexicon.pattern("search.asked_job", flags=re.I)
# "for a living", "for work": the job, said in words that would match "lives" and "works" as keywords
_JOB_IDIOM = lexicon.pattern("search.job_idiom", flags=re.I)


def without_job_idiom(query: str) -> str:
    """The keyword query of "what does my wife do for a living?" without "for a living": the question names the
    job (its words join the keyword query), and "living" would match "lives in Buenos Aires"."""
    return _JOB_IDIOM.sub(" ", query) if _WHAT_ONE_DOES.search(query.strip()) else query


def asked_words(query: str, people: bool = False) -> set[str]:
    """The keyword tokens of the relation an English question names ("dog" in "my dog's name"; with `people`,
    also of someone it names: "job" in "Alex's job")."""
    return set(_asked_words(query, people))


# one search's analysis asks these of the same question four times (the keyword words, the relation's tokens, its
# CJK words, the relations themselves): the answers of the last few questions are kept
@lru_cache(maxsize=16)
def _asked_words(query: str, people: bool) -> frozenset[str]:
    rxs = _ASKED + (_ASKED_OF_SOMEONE if people else ())
    words = [m.group(1) for rx in rxs for m in rx.finditer(query)]
    if _WHAT_ONE_DOES.search(query.strip()):
        words.append("job")
    chained = set(tokenize(" ".join(m.group(1) for m in _POSSESSED_CHAIN.finditer(query))))
    return frozenset(tokenize(" ".join(words))) | {t for t in chained if any(t in ts for ts in _TOKENS.values())}


def named_relations(query: str, people: bool = False) -> list[str]:
    """The relations of the table the question names, in the table's order: by the English relation word
    ("my wife", "where do I live") or by a Chinese / Japanese word anywhere in it (我妹妹, 住んで)."""
    return list(_named_relations(query, people))


@lru_cache(maxsize=16)
def _named_relations(query: str, people: bool) -> tuple[str, ...]:
    asked = _asked_words(query, people)
    return tuple(rel for rel in RELATIONS if asked & _TOKENS[rel] or any(w in query for w in _CJK[rel]))


def relation_keywords(query: str, people: bool = False) -> list[str]:
    """Every word, in the three languages, of the relations the question names: added to the keyword query so
    that the memory stating the relation in other words is recalled ("job" -> "work", "狗" -> "dog")."""
    return [w for rel in _named_relations(query, people) for w in RELATIONS[rel]]


def relation_words(query: str) -> set[str]:
    """The tokens a relation the question names is stated with: the question's own relation word, the Latin
    words of its table entries (stemmed: "job" also "work"), and their CJK words of one or two characters (a CJK
    keyword token: "住" also "live"); empty: it names none."""
    out = set(_asked_words(query, False))
    for rel in _named_relations(query, False):
        out |= _TOKENS[rel]
        out |= {w for w in _CJK[rel] if len(w) <= 2}
    return out


def attribute_words(relations: list[str]) -> tuple[set[str], set[str]]:
    """What a question asks of one of the user's people: the keyword tokens and CJK words of the relations it
    names besides the person ("my son's birthday": birthday, 生日, 誕生日 ...; "where does my grandmother live":
    live, 住 ...). Empty unless it names a person or pet and something of theirs."""
    if not any(rel in PEOPLE for rel in relations):
        return set(), set()
    held = [rel for rel in relations if rel not in PEOPLE]
    tokens, cjk = {t for rel in held for t in _TOKENS[rel]}, {w for rel in held for w in _CJK[rel]}
    if "job" in held:  # what they do may be said as what they are: "Lucía is a dentist"
        tokens, cjk = tokens | _OCCUPATION_TOKENS, cjk | _OCCUPATION_CJK
    return tokens, cjk


def cjk_words(query: str) -> set[str]:
    """The CJK words of the relations the question names (their substrings state the relation in a memory)."""
    return {w for rel in _named_relations(query, False) for w in _CJK[rel]}
