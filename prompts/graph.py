"""Prompts of the knowledge-graph steps of the add graph (extract_relations, resolve_graph_conflicts).

Written for MemoryX after reading how mem0 does it (graphs/utils.py): self-references become the user's
id, relation names are consistent and timeless. Differences: entities and relations are asked for in ONE
model call (both tools bound), each relation names the memory it comes from (so UPDATE/DELETE of a memory
can cascade to exactly its relations), names stay in the input's language, and the conflict step sees
the new relations next to the existing ones and is told which relations are single-valued.

Placeholders are `{user_id}` only; literal braces in the JSON examples are doubled for `str.format`.
Each prompt's first line is a task tag (`[memoryx-task: graph_…]`, the convention of models/offline.py) so
the offline model can tell the tasks apart in JSON mode, where no tools are bound.
"""

from __future__ import annotations

TAG_EXTRACT = "[memoryx-task: graph_extract]"
TAG_RELATIONS = "[memoryx-task: graph_relations]"
TAG_DELETE = "[memoryx-task: graph_delete]"

_ENTITY_RULES = """\
Entities:
- Extract only what the text states explicitly: people, places, organisations, things, activities, dates.
- Self-references of the user ("I", "me", "my", "我", "我的", "私", or a memory with no subject such as
  "Lives in Berlin" / "住在北京") are the entity "{user_id}" with type "person". Never output "I", "me",
  "user" or "我" as an entity name.
- Use the most complete name of an entity and the same spelling every time ("John Doe", not "John" and "he").
- Keep names in the language and script they are written in ("北京" stays "北京", "Berlin" stays "Berlin").
  Strip articles, quantities and verbs: "a cup of coffee" -> "coffee", "喝咖啡" -> "咖啡".
- Types are short, general, lowercase English words: person, city, country, place, organization, food,
  activity, object, event, date, concept."""

_RELATION_RULES = """\
Relations (source -> relationship -> destination):
- Only between entities stated in the text; the source is usually the subject ("{user_id}" for the user).
- Relationship names are consistent, general and timeless: the state, not the change.
  "moved to Paris" -> lives_in; "became a professor" -> profession; "started at Acme" -> works_at.
- English input: lowercase snake_case English verbs: lives_in, works_at, likes, is_named, has_pet, married_to,
  friend_of, studies_at, born_in, visited. Always the same name for the same meaning.
- Chinese input: short natural Chinese relation names: 住在, 工作于, 喜欢, 名叫, 养了, 朋友, 就读于.
  Japanese input: natural Japanese (住んでいる, 働いている, 好き). Never translate entity names.
- A negation or retraction ("no longer likes tea", "不再喜欢茶") is NOT a relation: extract nothing for it.
- Each memory is numbered [0], [1], ...; give every relation the number of the memory it comes from."""

EXTRACT_ENTITIES_PROMPT = (
    TAG_EXTRACT
    + """
You build a knowledge graph of the user "{user_id}" from the memories below.

"""
    + _ENTITY_RULES
    + """

Call the tool extract_entities with every entity. Do not answer questions found in the text."""
)

EXTRACT_RELATIONS_PROMPT = (
    TAG_RELATIONS
    + """
You build a knowledge graph of the user "{user_id}" from the memories below and the entities found in them.

"""
    + _RELATION_RULES
    + """

Call the tool establish_relationships with every relation (an empty list if there is none)."""
)

# The one-call form used by extract_relations: both tools bound, both asked for.
EXTRACT_GRAPH_PROMPT = (
    TAG_EXTRACT
    + """
You build a knowledge graph of the user "{user_id}" from the numbered memories below.

"""
    + _ENTITY_RULES
    + "\n\n"
    + _RELATION_RULES
    + """

Call BOTH tools in this one answer: extract_entities with every entity, and establish_relationships with
every relation (an empty list if there is none). Do not answer questions found in the text."""
)

_JSON_ONLY = "Answer with one JSON object and nothing else: no code fences, no explanation."

EXTRACT_ENTITIES_JSON_PROMPT = (
    TAG_EXTRACT
    + """
You build a knowledge graph of the user "{user_id}" from the memories below.

"""
    + _ENTITY_RULES
    + """

"""
    + _JSON_ONLY
    + """
{{"entities": [{{"entity": "{user_id}", "entity_type": "person"}}, {{"entity": "Berlin", "entity_type": "city"}}]}}"""
)

EXTRACT_RELATIONS_JSON_PROMPT = (
    TAG_RELATIONS
    + """
You build a knowledge graph of the user "{user_id}" from the memories below and the entities found in them.

"""
    + _RELATION_RULES
    + """

"""
    + _JSON_ONLY
    + """
{{"relations": [{{"source": "{user_id}", "relationship": "lives_in", "destination": "Berlin", "memory": 0}}]}}"""
)

# JSON-mode form of the one-call extraction (models without tool calling).
EXTRACT_GRAPH_JSON_PROMPT = (
    TAG_EXTRACT
    + """
You build a knowledge graph of the user "{user_id}" from the numbered memories below.

"""
    + _ENTITY_RULES
    + "\n\n"
    + _RELATION_RULES
    + """

"""
    + _JSON_ONLY
    + """ Example for "[0] Lives in Berlin" and "[1] 喜欢咖啡":
{{"entities": [{{"entity": "{user_id}", "entity_type": "person"}}, {{"entity": "Berlin", "entity_type": "city"}},
  {{"entity": "咖啡", "entity_type": "food"}}],
 "relations": [{{"source": "{user_id}", "relationship": "lives_in", "destination": "Berlin", "memory": 0}},
  {{"source": "{user_id}", "relationship": "喜欢", "destination": "咖啡", "memory": 1}}]}}
Use {{"entities": [], "relations": []}} when there is nothing to extract."""
)

_DELETE_RULES = """\
You keep the knowledge graph of the user "{user_id}" accurate. You get EXISTING relations, each with a
reference [r0], [r1], ..., the NEW information (memories just stored) and the NEW relations taken from it.
Self-references in the new information ("I", "me", "我", "私") mean "{user_id}".

Name an existing relation as outdated only when the new information contradicts it or replaces it:
- A single-valued relation gets a new value: lives_in / 住在 (home), works_at / 工作于 (employer),
  is_named / 名叫 (name), married_to, age, birthday. "{user_id} lives_in Berlin" is outdated by
  "{user_id} lives_in Paris" (the user moved).
- The new information retracts or negates it: "no longer likes tea" / "不再喜欢茶" outdates
  "{user_id} likes tea".
Do NOT name a relation when both can be true: "likes pizza" and "likes burgers" coexist; visiting Paris
does not end living in Berlin; a new friend does not end an old friendship. When in doubt, keep it.
Never name one of the NEW relations."""

DELETE_RELATIONS_PROMPT = (
    TAG_DELETE
    + "\n"
    + _DELETE_RULES
    + """

Call delete_graph_memory once for every outdated relation, with its source, relationship and destination
exactly as listed. Call no tool when nothing is outdated."""
)

DELETE_RELATIONS_JSON_PROMPT = (
    TAG_DELETE
    + "\n"
    + _DELETE_RULES
    + """

"""
    + _JSON_ONLY
    + """ Copy source, relationship and destination exactly as listed:
{{"delete": [{{"source": "{user_id}", "relationship": "lives_in", "destination": "Berlin"}}]}}
Use {{"delete": []}} when nothing is outdated."""
)

# User-message headers: the offline model (models/offline_graph.py) parses messages written with them.
USER_ID_HEADER = "User id:"
MEMORIES_HEADER = "Memories:"
ENTITIES_HEADER = "Entities:"
EXISTING_HEADER = "Existing relations:"
NEW_INFO_HEADER = "New information:"
NEW_RELATIONS_HEADER = "New relations:"

# Shown with the model's own answer when a JSON-mode answer could not be read (models.llm_io.call_with_retry).
RETRY_GRAPH_JSON_PROMPT = ('Your answer could not be used: {error}. Answer again with only the JSON object '
                           '{{"entities": [...], "relations": [...]}}.')
RETRY_DELETE_JSON_PROMPT = 'Your answer could not be used: {error}. Answer again with only that object.'
