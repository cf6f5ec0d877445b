"""The preference path: a question asking for a recommendation or an opinion ("what should I cook tonight",
"suggest a book", "推荐一部电影", "おすすめの本は") also retrieves what the user said they like or dislike.

Such a question rarely shares words with the preference that answers it ("I love Italian food, especially
pasta" for "what should I cook?"), so two things happen (nodes/keyword_recall.py, nodes/expand_context.py): a
keyword search of the query's words together with the vocabulary of stated preferences runs as a recall path
of its own ("preference"), and memories that state a preference get the `preference_bonus` knob.
"""

from __future__ import annotations

import re

from memoryx.search.relations import opens_on_someone

_RECOMMENDATION = re.compile(
    r"\bshould i\b|\brecommend|\bsuggest|\bany (ideas|tips|suggestions|advice)\b|\bideas? for\b|\badvice\b"
    r"|\bwhat (to|can i|could i|shall i) (cook|eat|make|read|watch|buy|get|do|wear|play|listen|try|visit|bring|order)"
    r"|\bwhat would i (like|enjoy|love)\b|\bwould i (like|enjoy)\b|\bgift for\b|\bwhere (should|could) (i|we)\b"
    r"|\b(?:can|could|may) (?:i|we) (?:eat|have|drink|try|order)\b"
    r"|推荐|建议|我应该|我该|适合我|おすすめ|お勧め|何を.*(?:べき|いい)|どれがいい"
    # ... or what the user cannot have or stand, which their stated dislikes, diet and allergies answer
    r"|\b(?:can['’]?t|cannot)(?: i| we)? stand\b|\bdon['’]?t (?:like|eat)\b|\b(?:hate|dislike)\b"
    r"|不喜欢|不爱吃|讨厌|不吃|不能吃|吃不了|忌口|苦手|嫌い|食べ(?:ちゃいけない|てはいけない|られない|ちゃダメ)", re.I)

_PREFERENCE = re.compile(
    r"\b(like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|prefer|prefers|preferred|favou?rites?|fan of|"
    r"into|keen on|hate|hates|dislike|dislikes|can't stand|allergic|vegetarian|vegan|avoid|"
    r"(?:don't|do not|can't|cannot|never|no longer)\s+(?:eat|drink))\b"
    r"|喜欢|爱吃|爱看|最爱|讨厌|不喜欢|偏好|过敏|素食|好き|嫌い|大好き|苦手|アレルギー", re.I)

# searched with the query's own words on the preference path (the stemmer maps the forms together)
PREFERENCE_WORDS = "like love enjoy prefer favorite favourite fan hate dislike allergic 喜欢 最爱 讨厌 好き 嫌い"


# a recommendation about food ("suggest a dinner recipe", "what should I cook", 推荐一道菜, 何を食べたらいい) is
# answered by what the user eats or cannot ("I don't eat pork", "I'm lactose intolerant", "I can't have
# gluten"), not by their favourite author
_FOOD_ASKED = re.compile(
    r"\b(?:recipes?|cook|cooking|dinner|lunch|breakfast|brunch|meals?|eat|eating|snacks?|dish|dishes|bake|"
    r"restaurants?|menu|food|drinks?|dessert|cuisine)\b|吃|菜|做饭|餐|食谱|料理|食べ|ご飯|レシピ|飲み", re.I)
_FOOD_STATED = re.compile(
    r"\b(?:eat|eats|eating|ate|drink|drinks|food|foods|cook|cooking|cuisine|dish|dishes|meals?|diet|vegetarian|vegan|"
    r"pescatarian|allerg\w*|intoleran\w*|coeliac|celiac|gluten|dairy|lactose|meat|fish|pork|beef|chicken|seafood|"
    r"shellfish|nuts?|peanuts?|spicy|sugar|salt|caffeine|coffee|tea|alcohol|halal|kosher)\b"
    r"|吃|喝|菜|素食|过敏|忌口|饮食|食べ|飲|料理|アレルギー|ベジタリアン", re.I)
FOOD_WORDS = "eat drink food diet vegetarian vegan allergic intolerant gluten dairy 吃 过敏 素食 食べ アレルギー"


def asks_food(query: str) -> bool:
    """A recommendation about food or drink."""
    return bool(_FOOD_ASKED.search(query))


def states_food(text: str) -> bool:
    """The memory says something of what the user eats or drinks: a like, a diet, an allergy, a rule."""
    return bool(_FOOD_STATED.search(text))


def asks_recommendation(query: str) -> bool:
    return bool(_RECOMMENDATION.search(query))


def states_preference(text: str, own: bool = False) -> bool:
    """The memory says what someone likes or dislikes; with `own`, the user themselves, not one of their people
    ("Suggest a dinner for me" is not answered by "User's daughter loves drawing")."""
    if not _PREFERENCE.search(text):
        return False
    return not own or not opens_on_someone(text)
