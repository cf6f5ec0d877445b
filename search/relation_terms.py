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

from memoryx.core.text import CJK_CHAR, tokenize

# relation -> its words; Latin words are matched as keyword tokens (stemmed), CJK words as substrings (Chinese in
# its simplified and traditional forms where they differ: 兒子, 媽媽, 醫生)
RELATIONS: dict[str, tuple[str, ...]] = {
    "dog": ("dog", "puppy", "狗", "犬"),
    "cat": ("cat", "kitten", "猫"),
    "pet": ("pet", "宠物", "寵物", "ペット"),
    "wife": ("wife", "spouse", "married", "妻子", "老婆", "媳妇", "媳婦", "爱人", "愛人", "太太", "妻", "奥さん", "嫁"),
    "husband": ("husband", "spouse", "married", "丈夫", "老公", "夫", "旦那"),
    "partner": ("partner", "girlfriend", "boyfriend", "bf", "gf", "fiancée", "fiancee", "fiancé", "fiance", "女朋友",
                "男朋友", "未婚妻", "未婚夫", "恋人", "戀人", "彼女", "彼氏", "婚約者"),
    "daughter": ("daughter", "girl", "女儿", "女兒", "闺女", "閨女", "娘"),
    "son": ("son", "boy", "儿子", "兒子", "息子"),
    "child": ("child", "children", "kid", "twins", "孩子", "子供", "子ども"),
    "sister": ("sister", "姐姐", "妹妹", "姉", "姐", "妹"),
    "brother": ("brother", "哥哥", "弟弟", "兄", "哥", "弟"),
    "mother": ("mother", "mom", "mum", "妈妈", "媽媽", "母亲", "母親", "母", "お母さん"),
    "father": ("father", "dad", "爸爸", "父亲", "父親", "父", "お父さん"),
    "parents": ("parents", "父母", "爸妈", "爸媽", "両親"),
    "grandmother": ("grandmother", "grandma", "granny", "奶奶", "外婆", "姥姥", "祖母", "おばあちゃん"),
    "grandfather": ("grandfather", "grandpa", "爷爷", "爺爺", "外公", "姥爷", "姥爺", "祖父", "おじいちゃん"),
    "granddaughter": ("granddaughter", "孙女", "孫女", "外孙女", "外孫女"),
    "grandson": ("grandson", "孙子", "孫子", "外孙", "外孫"),
    "grandchild": ("grandchild", "grandchildren", "grandkid", "孙辈", "孫輩", "孫"),
    "mother-in-law": ("岳母", "婆婆", "丈母娘", "義母"),  # the English word's tokens would be "mother"
    "father-in-law": ("岳父", "公公", "老丈人", "義父"),
    "friend": ("friend", "朋友", "友達", "友人"),
    "manager": ("manager", "boss", "supervisor", "经理", "經理", "老板", "老闆", "主管", "上司", "领导", "領導"),
    "colleague": ("colleague", "coworker", "同事", "同僚"),
    "doctor": ("doctor", "gp", "physician", "医生", "醫生", "大夫", "医者", "主治医"),
    "job": ("job", "work", "occupation", "profession", "career", "employer", "role", "position", "promoted", "hired",
            "工作", "职业", "職業", "上班", "仕事", "働"),
    "home": ("live", "home", "moved", "reside", "address", "house", "flat", "apartment", "condo", "cottage", "住", "搬",
             "引っ越", "住所"),
    "birthday": ("birthday", "bday", "born", "turns", "turning", "生日", "出生", "誕生日", "生まれ"),  # "Mom turns 65 on ..."
    "car": ("car", "drive", "车", "开车", "開車", "一辆", "一輛", "車", "運転"),  # 一辆: "a" of a vehicle ("买了一辆特斯拉")
    "school": ("school", "university", "uni", "college", "study", "student", "kindergarten", "nursery", "学校", "大学",
               "上学", "学生", "小学", "中学", "高中", "幼儿园", "小学校", "中学校", "高校", "保育園", "保育园", "幼稚園",
               "學校", "大學", "上學", "學生", "小學", "中學", "幼兒園"),
    "allergy": ("allergic", "allergy", "过敏", "過敏", "アレルギー"),
    # a health condition is said by its name ("I have asthma"): the common chronic ones are its words
    "health": ("health", "condition", "illness", "disease", "diagnosed", "medical", "medication", "asthma", "diabetes",
               "diabetic", "coeliac", "celiac", "migraine", "arthritis", "epilepsy", "eczema", "hypertension",
               "cholesterol", "持病", "疾病", "哮喘", "糖尿病", "高血压", "高血壓", "喘息"),
    # (what someone likes best is said with the verbs too: "My husband loves football", "夫はサッカーが大好きです")
    "favourite": ("favourite", "favorite", "like", "love", "enjoy", "最喜欢", "最喜歡", "最爱", "最愛", "喜欢", "喜歡",
                  "一番好き", "好きな", "好き",
                  "大好き"),
}

# what a job is called ("Lucía is a dentist", "她是护士", "看護師です"): asked what one of the user's people does,
# a statement of them naming one of these says it without a word of the job relation. Common occupations, not a
# list fitted to a benchmark; read only as what is asked of a person (`attribute_words`), never as keywords
OCCUPATIONS = (
    "accountant", "actor", "architect", "artist", "baker", "banker", "barber", "barista", "builder", "carpenter",
    "cashier", "chef", "cleaner", "coach", "consultant", "cook", "dentist", "designer", "developer", "doctor",
    "driver", "economist", "editor", "electrician", "engineer", "farmer", "firefighter", "gardener", "hairdresser",
    "journalist", "judge", "lawyer", "librarian", "lecturer", "manager", "mechanic", "midwife", "musician", "nurse",
    "paramedic", "pharmacist", "photographer", "physician", "physiotherapist", "pilot", "plumber", "police",
    "professor", "programmer", "psychologist", "researcher", "salesman", "scientist", "secretary", "singer",
    "soldier", "surgeon", "teacher", "therapist", "translator", "vet", "veterinarian", "waiter", "waitress",
    "writer", "医生", "大夫", "护士", "老师", "教师", "教授", "工程师", "律师", "厨师", "司机", "会计", "警察",
    "设计师", "程序员", "医者", "看護師", "先生", "教師", "弁護士", "エンジニア", "シェフ", "運転手", "警察官",
    "会計士", "デザイナー", "プログラマー",
)

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
# an English question's relation: the noun after "my" / "our", the verb after "do I" / "did we"
# (past a word saying which one: "my current job", "my new car", "my older sister")
_WHICH_ONE = r"(?:current|new|old|present|previous|former|last|latest|first|usual|own|older|younger|eldest|youngest)"
_POSSESSED = re.compile(rf"\b(?:my|our)\s+(?:{_WHICH_ONE}\s+)?(\w+)", re.I)
# "what health condition do I have", "which car do we drive": the thing asked about, named before "do I"
_WHAT_ONE_HAS = re.compile(r"\b(?:what|which)\s+(?:kind\s+of\s+|sort\s+of\s+)?(\w+(?:\s+\w+)?)\s+"
                           r"(?:do|did|does|am|are|was|were)\s+(?:i|we)\b", re.I)
# ... and a question asked inside a request, in statement order: "(do you know) where I live", "what I do now"
_ASKED_IN_ORDER = re.compile(r"\b(?:where|what|who|when|which)\s+(?:i|we)\s+"
                             r"(?:(?:still|usually|currently|now|actually)\s+)?(\w+)", re.I)
# ... and done by one of the user's people: "where does my mother live", "where did our son study"
_DONE_BY_MINE = re.compile(r"\b(?:do|does|did)\s+(?:my|our)\s+(?:\w+\s+)?\w+\s+(live|work|study|drive|like|love|enjoy)\b",
                           re.I)
# "my son's birthday": the birthday too, when it is a relation of the table ("my dog's name": not "name")
_POSSESSED_CHAIN = re.compile(r"\b(?:my|our)\s+\w+(?:'s|’s)\s+(\w+)", re.I)
_DONE_BY_ME = re.compile(r"\b(?:do|did|does|can|could|will|would|should|have|had|am|are|was|were)\s+(?:i|we)\s+"
                         r"(?:(?:still|really|usually|ever|also|even|actually|currently|now|normally)\s+)?(\w+)", re.I)


# ... of someone the question names: "Alex's job", "where does Marta live"
_POSSESSED_BY_NAME = re.compile(r"\b[A-Z][a-z]+(?:'s|’s)\s+(\w+)")
_DONE_BY_NAME = re.compile(r"\b(?:do|did|does)\s+[A-Z][a-z]+\s+(\w+)")
# "what do I do (for a living)?", "what does Alex do?": the job
_WHAT_ONE_DOES = re.compile(
    r"\bwhat\s+(?:do|does)\s+(?:i|we|my\s+\w+|[A-Z][a-z]+)\s+do(?:\s+for\s+(?:a\s+living|work))?"
    r"(?:\s+(?:now|these\s+days|nowadays))?\s*\??$", re.I)


# "for a living", "for work": the job, said in words that would match "lives" and "works" as keywords
_JOB_IDIOM = re.compile(r"\bfor\s+(?:a\s+living|work)\b", re.I)


def without_job_idiom(query: str) -> str:
    """The keyword query of "what does my wife do for a living?" without "for a living": the question names the
    job (its words join the keyword query), and "living" would match "lives in Buenos Aires"."""
    return _JOB_IDIOM.sub(" ", query) if _WHAT_ONE_DOES.search(query.strip()) else query


def asked_words(query: str, people: bool = False) -> set[str]:
    """The keyword tokens of the relation an English question names ("dog" in "my dog's name"; with `people`,
    also of someone it names: "job" in "Alex's job")."""
    rxs = (_POSSESSED, _DONE_BY_ME) + ((_POSSESSED_BY_NAME, _DONE_BY_NAME) if people else ())
    words = [m.group(1) for rx in rxs + (_WHAT_ONE_HAS, _ASKED_IN_ORDER, _DONE_BY_MINE) for m in rx.finditer(query)]
    if _WHAT_ONE_DOES.search(query.strip()):
        words.append("job")
    chained = set(tokenize(" ".join(m.group(1) for m in _POSSESSED_CHAIN.finditer(query))))
    return set(tokenize(" ".join(words))) | {t for t in chained if any(t in ts for ts in _TOKENS.values())}


def named_relations(query: str, people: bool = False) -> list[str]:
    """The relations of the table the question names, in the table's order: by the English relation word
    ("my wife", "where do I live") or by a Chinese / Japanese word anywhere in it (我妹妹, 住んで)."""
    asked = asked_words(query, people)
    return [rel for rel in RELATIONS
            if asked & _TOKENS[rel] or any(w in query for w in _CJK[rel])]


def relation_keywords(query: str, people: bool = False) -> list[str]:
    """Every word, in the three languages, of the relations the question names: added to the keyword query so
    that the memory stating the relation in other words is recalled ("job" -> "work", "狗" -> "dog")."""
    return [w for rel in named_relations(query, people) for w in RELATIONS[rel]]


def relation_words(query: str) -> set[str]:
    """The tokens a relation the question names is stated with: the question's own relation word, the Latin
    words of its table entries (stemmed: "job" also "work"), and their CJK words of one or two characters (a CJK
    keyword token: "住" also "live"); empty: it names none."""
    out = set(asked_words(query))
    for rel in named_relations(query):
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
    return {w for rel in named_relations(query) for w in _CJK[rel]}
