"""Search as data: the plan a search follows, its named recipes, the ranking knobs, rerankers, the dates a
query names, its SQL reads, access recording and the ready-to-paste context block. The search graph's nodes
(memoryx.nodes) read these.

May import: runtime, stores, models, prompts, core. Never a node, a graph or the API.
"""

from memoryx.search.access import flush_access, record_access_later
from memoryx.search.dates import asks_when, states_time, time_window
from memoryx.search.plan import SearchPlan
from memoryx.search.recipes import RECIPES, SearchRecipe, recipe_named
from memoryx.search.rerankers import CrossEncoderReranker, ModelReranker, NoReranker, Reranker, make_reranker
from memoryx.search.tuning import DEFAULTS, SearchTuning, tuning

__all__ = ["SearchPlan", "SearchRecipe", "RECIPES", "recipe_named", "SearchTuning", "DEFAULTS", "tuning",
           "Reranker", "NoReranker", "CrossEncoderReranker", "ModelReranker", "make_reranker", "time_window",
           "asks_when", "states_time", "record_access_later", "flush_access"]
