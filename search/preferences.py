"""The preference path: a question asking for a recommendation or an opinion ("what should I cook tonight",
"suggest a book", "推荐一部电影", "おすすめの本は") also retrieves what the user said they like or dislike.

Such a question rarely shares words with the preference that answers it ("I love Italian food, especially
pasta" for "what should I cook?"), so two things happen (nodes/keyword_recall.py, nodes/expand_context.py): a
keyword search of the query's words together with the vocabulary of stated preferences runs as a recall path
of its own ("preference"), and memories that state a preference get the `preference_bonus` knob.
"""

from __future__ import annotations

import re

from memoryx.core import lexicon
from memoryx.core.caseless import Caseless
from memoryx.search.relations import opens_on_someone

# what asks for a recommendation, or what the user cannot have or stand (which their stated dislikes, diet and
# allergies answer), and what states a like or dislike: phrase patterns of each language in the lexicon
_RECOMMENDATION = lexicon.pattern("search.recommendation", flags=re.I)
_PREFERENCE = Caseless(lexicon.pattern("search.preference", flags=re.I))  # read on every candidate's text

# searched with the query's own words on the preference path (the stemmer maps the forms together)
PREFERENCE_WORDS = " ".join(lexicon.table("search.preference_keyword"))


# a recommendation about food ("suggest a dinner recipe", "what should I cook", 推荐一道菜, 何を食べたらいい) is
# answered by what the user eats or cannot ("I don't eat pork", "I'm lactose intolerant", "I can't have
# gluten"), not by their favourite author
_FOOD_ASKED = lexicon.matcher("search.food_asked")
_FOOD_STATED = Caseless(lexicon.pattern("search.food_stated", flags=re.I))
FOOD_WORDS = " ".join(lexicon.table("search.food_keyword"))


def asks_food(query: str) -> bool:
    """A recommendation about food or drink."""
    return _FOOD_ASKED.contains(query)


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
