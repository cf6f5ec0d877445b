"""Function-calling tools of the knowledge-graph steps (pydantic schemas, bound with `bind_tools`).

Same tool names and argument names as mem0's graphs/tools.py (extract_entities, establish_relationships,
delete_graph_memory) so prompts and traces read alike; `establish_relationships` takes `relations` (mem0
calls that list `entities`, which confuses models) and each relation may carry the index of the memory it
came from. The parsers below accept both spellings and the usual deviations of real models.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

EXTRACT_ENTITIES = "extract_entities"
ESTABLISH_RELATIONSHIPS = "establish_relationships"
DELETE_GRAPH_MEMORY = "delete_graph_memory"


class EntityItem(BaseModel):
    entity: str = Field(description="The entity's name, in the text's language; the user's id for self-references.")
    entity_type: str = Field(description="A short general type: person, city, organization, food, activity, ...")


class ExtractEntities(BaseModel):
    """Extract the entities of the text and their types."""

    model_config = ConfigDict(title=EXTRACT_ENTITIES)
    entities: list[EntityItem] = Field(description="Every entity stated in the text.")


class RelationItem(BaseModel):
    source: str = Field(description="Source entity (the user's id for self-references).")
    relationship: str = Field(description="Timeless relation name: lowercase snake_case English (works_at) or natural Chinese (工作于).")
    destination: str = Field(description="Destination entity.")
    memory: int | None = Field(default=None, description="Number [n] of the memory the relation comes from.")


class EstablishRelationships(BaseModel):
    """Establish the relations among the extracted entities."""

    model_config = ConfigDict(title=ESTABLISH_RELATIONSHIPS)
    relations: list[RelationItem] = Field(description="Every relation stated in the text (may be empty).")


class DeleteGraphMemory(BaseModel):
    """Mark one existing relation of the graph as outdated or contradicted by the new information."""

    model_config = ConfigDict(title=DELETE_GRAPH_MEMORY)
    source: str = Field(description="Source entity of the existing relation, exactly as listed.")
    relationship: str = Field(description="Relation name of the existing relation, exactly as listed.")
    destination: str = Field(description="Destination entity of the existing relation, exactly as listed.")


EXTRACTION_TOOLS = [ExtractEntities, EstablishRelationships]
DELETE_TOOLS = [DeleteGraphMemory]


def tool_names(tools) -> set[str]:
    """Names of bound tools given as pydantic classes, OpenAI dicts, BaseTools or functions."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    names: set[str] = set()
    for tool in tools or []:
        try:
            spec = tool if isinstance(tool, dict) and "function" in tool else convert_to_openai_tool(tool)
            names.add(spec["function"]["name"])
        except Exception:  # noqa: BLE001 - an unknown tool shape names nothing
            name = getattr(tool, "name", None) or (tool.get("name") if isinstance(tool, dict) else None)
            if name:
                names.add(name)
    return names
